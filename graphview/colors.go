package graphview

import (
	"fmt"
	"image/color"

	"codeloom/app/codegraph"
)

var (
	stubFill = color.NRGBA{0xf3, 0xf4, 0xf6, 0xff}
	stubLine = color.NRGBA{0x9c, 0xa3, 0xaf, 0xff}
)

// kindColors is the palette by node kind: a light fill and a darker outline.
func kindColors(k codegraph.Kind) (fill, line color.NRGBA, ok bool) {
	switch k {
	case codegraph.KindFile:
		return color.NRGBA{0xdb, 0xea, 0xfe, 0xff}, color.NRGBA{0x25, 0x63, 0xeb, 0xff}, true
	case codegraph.KindClass:
		return color.NRGBA{0xfd, 0xe6, 0x8a, 0xff}, color.NRGBA{0xb4, 0x53, 0x09, 0xff}, true
	case codegraph.KindFunction:
		return color.NRGBA{0xbb, 0xf7, 0xd0, 0xff}, color.NRGBA{0x15, 0x80, 0x3d, 0xff}, true
	case codegraph.KindMethod:
		return color.NRGBA{0xc7, 0xf9, 0xe8, 0xff}, color.NRGBA{0x0f, 0x76, 0x6e, 0xff}, true
	case codegraph.KindPackage:
		return color.NRGBA{0xe9, 0xd5, 0xff, 0xff}, color.NRGBA{0x7e, 0x22, 0xce, 0xff}, true
	case KindFolder:
		return color.NRGBA{0xe2, 0xe8, 0xf0, 0xff}, color.NRGBA{0x33, 0x41, 0x55, 0xff}, true
	}
	return stubFill, stubLine, false
}

// NodeColors returns the fill and outline colours of a node.
func NodeColors(n ViewNode) (fill, line color.NRGBA) {
	if n.Stub {
		return stubFill, stubLine
	}
	f, l, _ := kindColors(n.Kind)
	return f, l
}

// EdgeColor returns the colour of an edge kind.
func EdgeColor(k codegraph.EdgeKind) color.NRGBA {
	switch k {
	case codegraph.EdgeContains:
		return color.NRGBA{0xb0, 0xb7, 0xc0, 0xff}
	case codegraph.EdgeImports:
		return color.NRGBA{0x3b, 0x82, 0xf6, 0xff}
	case codegraph.EdgeCalls:
		return color.NRGBA{0x16, 0xa3, 0x4a, 0xff}
	case codegraph.EdgeInherits:
		return color.NRGBA{0xd9, 0x77, 0x06, 0xff}
	case codegraph.EdgeUses:
		return color.NRGBA{0x64, 0x74, 0x8b, 0xff}
	case codegraph.EdgeRequires:
		return color.NRGBA{0x93, 0x33, 0xea, 0xff}
	case codegraph.EdgeDispatches:
		return color.NRGBA{0x0d, 0x94, 0x88, 0xff}
	case codegraph.EdgeImplements:
		return color.NRGBA{0xea, 0x8a, 0x0c, 0xff}
	}
	return stubLine
}

func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// KindColorHex returns NodeColors as "#rrggbb" strings (for Graphviz export).
func KindColorHex(n ViewNode) (fill, line string) {
	f, l := NodeColors(n)
	return hexColor(f), hexColor(l)
}

// EdgeColorHex returns EdgeColor as "#rrggbb".
func EdgeColorHex(k codegraph.EdgeKind) string { return hexColor(EdgeColor(k)) }
