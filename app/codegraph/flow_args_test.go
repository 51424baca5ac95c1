package codegraph

import "testing"

func TestPythonCrossFileArgs(t *testing.T) {
	g := openT(t, writeTree(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/message.py": `
class Message:
    def get(self, k):
        return k

    def payload(self):
        return 1

    def as_string(self):
        from pkg.generator import Generator
        g = Generator()
        g.flatten(self)
        return 1
`,
		"pkg/generator.py": `
class Generator:
    def flatten(self, msg, unixfrom=False):
        self._write(msg)

    def _write(self, msg):
        msg.get('x')
        self._dispatch(msg)

    def _dispatch(self, msg):
        meth = getattr(self, '_handle_' + 'text', None)
        meth(msg)

    def _handle_text(self, msg):
        msg.payload()
`}), Options{NoCache: true}).Graph()
	exactEdges(t, g, "pkg.generator.Generator._write", EdgeCalls, "pkg.message.Message.get", "pkg.generator.Generator._dispatch")
	exactEdges(t, g, "pkg.generator.Generator._handle_text", EdgeCalls, "pkg.message.Message.payload")
}
