// Package localefix keeps Fyne from logging "Error parsing user locale C" on
// every start under a C.UTF-8 / POSIX.* locale (common in containers and CI):
// Fyne's locale lookup reads LANGUAGE before LANG when the locale is not
// plain "C", so it sets LANGUAGE=en in that case. It must be imported (for
// its side effect) by the package that imports Fyne; having no dependencies
// beyond the standard library and an import path sorting before fyne.io, it
// is initialised before Fyne's packages.
package localefix

import (
	"os"
	"strings"
)

func init() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		if strings.HasPrefix(v, "C.") || strings.HasPrefix(v, "POSIX.") {
			os.Setenv("LANGUAGE", "en") // ignored by gettext under the C locale; read by Fyne
		}
		return
	}
}
