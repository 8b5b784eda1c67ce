// Package human writes durations for people to read in the retrykit
// command's text: days as well as hours ("20d10h17m", not "490h17m0s"),
// and no more digits than a reader needs, rounded in the direction that
// keeps a range honest.
//
// Rules, in order:
//  1. Under a minute (in absolute value) a duration is written exactly,
//     down to the nanosecond ("500ms", "14.999999999s"): short values are
//     where the last nanosecond matters (the top of a jitter range).
//  2. From a minute to under a day it is rounded to whole seconds, from a
//     day on to whole minutes: [Floor] rounds down (a lower bound), [Ceil]
//     up (an upper bound), [Round] to the nearest (a single value).
//  3. It is written as days, hours, minutes and seconds, leaving out the
//     zero units at the end ("2m", "1d0h5m", "3d8h31m53s"); a fraction of a
//     second appears only under rule 1.
//
// So for a range [lo, hi], Floor(lo) ≤ lo ≤ hi ≤ Ceil(hi): the printed
// range always contains the true one. When rounding would leave the
// time.Duration range (within a minute of ±292 years), the exact value is
// written instead. Machine-readable output (JSON) keeps nanoseconds and does
// not use this package.
package human
