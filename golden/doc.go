// Package golden is distpass's golden-file test harness: a case is one
// txtar archive holding an input module, a pipeline and the expected
// output of every rank, so a new dist-op impl is tested by writing the
// program it should partition and reading the programs it gives.
//
// Sections of a case:
//
//	input.dpir         the serial module
//	pipeline           pass pipeline text; $RANK is replaced by the rank
//	want/rankN.dpir    the expected module of rank N
//	want/rankN.error   the expected error (exact text) of rank N instead
//	want/rankN.dot     optional: the expected DOT of rank N's main program
//
// The archive's comment says which reference behaviour the case pins.
// Every case also checks that each output re-parses to an equal module,
// that a second run gives the same bytes, that the input is unchanged,
// and that each output's DOT renders with Graphviz (when dot is
// installed; DISTPASS_REQUIRE_DOT=1 makes its absence a failure).
//
// DISTPASS_UPDATE=1 rewrites the want sections from what the code gives;
// read the diff before committing it. A case pins the ranks it has want
// sections for (an empty section pins one more); a case with none gets
// one for every rank the pipeline runs (each rank of the input's meshes
// when the pipeline names $RANK, else rank 0). It refuses, writing
// nothing, to record an error for a rank that expected a program or had
// no section: DISTPASS_UPDATE=errors records those too.
package golden
