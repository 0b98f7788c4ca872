// Package classroom holds the live classroom's browser side: the
// projector page an instructor shows, the phone page students join with,
// their stylesheet and JavaScript modules. There is no build step: the files
// served are the files in this folder.
package classroom

import "embed"

// Files are the classroom's pages, styles and scripts as embedded at build
// time.
//
//go:embed *.html *.css *.js
var Files embed.FS
