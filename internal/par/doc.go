// Package par is the one way distpass runs work on several cores: a
// bounded loop over n items, and a worker that takes items from a
// producer in order (a two-stage pipeline), whose panics reach the
// caller.
//
// A panic on a worker goroutine would end the process, past every
// recover the caller set up: the pass manager's, which turns a pass's
// panic into a *passes.PassError with a reproducer, sits on the calling
// goroutine. Each helper here recovers a worker's panic and raises it
// again on the calling goroutine once every worker has stopped, with the
// worker's stack in the value.
package par
