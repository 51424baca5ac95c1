package ui

import (
	"errors"
	"fmt"

	sqdialog "github.com/sqweek/dialog"
)

// nativeDirectory asks for a folder with the platform's own chooser
// (sqweek/dialog: GTK3 on Linux). Known hazard: its GTK backend has crashed
// when first used after another GL toolkit opened its window (sqweek/dialog
// issues 51 and 58), so on Linux it is used only when asked for
// (CODELOOM_NATIVE_DIALOGS=1) and any error falls back to Fyne's dialog.
func nativeDirectory(title string) (string, error) {
	dir, err := sqdialog.Directory().Title(title).Browse()
	if errors.Is(err, sqdialog.ErrCancelled) {
		return "", errNativeCancelled
	}
	if err != nil {
		return "", fmt.Errorf("native folder dialog: %w", err)
	}
	return dir, nil
}

// nativeYesNo asks a yes/no question with the platform's message box.
func nativeYesNo(title, detail string) (bool, error) {
	return sqdialog.Message("%s", detail).Title(title).YesNo(), nil
}
