//go:build !unix

package cli

import "os"

// mapFile is not available here: the caller reads the file instead.
func mapFile(*os.File) ([]byte, bool) { return nil, false }
