package graphview

import "codeloom/graphview/gvcache"

// go-graphviz has compiled Graphviz by now (this package imports it), so the
// per-user TMPDIR gvcache set up for it can be put back.
func init() { gvcache.Restore() }
