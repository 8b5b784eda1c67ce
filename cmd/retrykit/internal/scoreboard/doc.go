// Package scoreboard builds a static site from conformance reports: an
// index with one row per implementation and one column per requirement
// group, a page per implementation with its history, a badge each, and
// every report as an HTML page.
//
// [Load] reads the JSON reports of a directory (`retrykit conformance
// --format json`, library or --server) and groups them by implementation
// and suite version; [Write] writes the site. Reports of different suite
// versions stay apart: each suite version has its own table, history and
// badge segment, and no score adds them up. Every number shown is read
// from a report's own tallies (scores, per-requirement summaries, causes);
// nothing is judged again. An interop table (clients such as the official
// SDKs tried by hand against a server, [Interop]) is shown on the index as
// it is, apart from every score.
//
// The pages have their style inline and no script; the only files they
// load are the site's own badges.
//
// Not a goal: running implementations. The reports are made elsewhere (by
// hand, in CI) and committed; the site is rebuilt from them.
package scoreboard
