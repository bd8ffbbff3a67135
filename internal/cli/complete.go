package cli

import (
	"encoding/json"
	"fmt"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/lower"
)

const completeArgs = "[-lazy] [-report [-json]] [-o FILE] [FILE|-]"

const completeDoc = `Complete infers, from a few annotated vars (the data's batch split on
dp, weight matrices on mp), the dist of every var and op of the module's
main program and each op's impl: the complete pass (see 'distpass passes'
and package complete). Vars and ops that have a dist keep it. It prints
the completed module (to -o FILE, or stdout).

-report prints instead what completion decided, a line each: the summary
(vars completed, ops, fixpoint sweeps; counts of conflicts, uneven
splits, barriers, rule errors and reshards needed), the impls picked,
then every conflict (the var, dim, both mesh dims and the annotation each
came from), uneven split, barrier (an op type without a sharding rule:
its args replicated), rule conflict (an op whose inputs' dists its rule
refuses together: the first inputs keep theirs, the later ones are
wanted as the rule then requires), rule error, fallback (an op no impl
lowers as its rule gives it: it reads and writes every arg replicated)
and needed reshard (an op that requires
another dist of an arg than its var has: the next pass would insert a
reshard there; check-annotations refuses it until then). With -o the
module is written too.

-json makes the report one JSON document:
  {"file": NAME, "summary": S, "vars": {"completed": N, "annotated": N},
   "ops": {"completed": N, "kept": N}, "sweeps": N, "visits": N,
   "impls": [{"impl": "T:N", "count": N}...],
   "conflicts": [{"op", "op_type", "var", "dim", "kept", "kept_from",
                  "lost", "lost_from"}...],
   "uneven": [{"op", "op_type", "var", "dim", "size", "mesh_dim", "ways"}...],
   "barriers": [{"op", "op_type", "why"}...], "rule_conflicts": [...],
   "rule_errors": [...], "fallbacks": [...],
   "reshards": [{"op", "op_type", "var", "output", "mesh", "have",
                 "have_partial", "want_mesh", "want"}...],
   "origins": [{"var": V, "dims": [{"dim", "mesh_dim", "annotation",
                "hops": [{"op", "op_type", "from", "from_dim", "to",
                          "to_dim"}...]}...]}...]}
origins lists every var with a split dim, in block order: for each dim
the annotation its mesh dim came from ("var x", or "op N TYPE" for an
annotated op) and the ops it flowed through, first hop first.

Exit codes: 0 ok, 1 bad input or a completion that fails (an op no impl
lowers), 2 usage.`

func runComplete(env *Env, args []string) int {
	fs := newFlagSet(env, "complete", completeArgs, completeDoc)
	lazy := fs.Bool("lazy", false, "keep partial results partial where an impl could reduce them")
	report := fs.Bool("report", false, "print the report instead of the module")
	asJSON := fs.Bool("json", false, "with -report: one JSON document (schema above)")
	out := fs.String("o", "", "write the completed module to `FILE`")
	files, code, ok := parseFlagsAnywhere(env, fs, args)
	if !ok {
		return code
	}
	if *asJSON && !*report {
		fmt.Fprintf(env.Stderr, "distpass complete: -json formats the report: give -report too\nusage: distpass complete %s\n", completeArgs)
		return ExitUsage
	}
	in, m, code, ok := loadOne(env, "complete", files)
	if !ok {
		return code
	}
	rep, err := complete.Complete(m, complete.Options{Registry: lower.DefaultRegistry(), Lazy: *lazy})
	if err != nil {
		printErr(env, in.name, err)
		return ExitFail
	}
	if !*report || !isStdout(*out) {
		if err := verifyResult(m); err != nil {
			printErr(env, in.name, err)
			return ExitFail
		}
		if err := writeModule(env, *out, m); err != nil {
			fmt.Fprintf(env.Stderr, "distpass complete: %v\n", err)
			return ExitFail
		}
	}
	if !*report {
		return ExitOK
	}
	if *asJSON {
		doc := struct {
			File    string `json:"file"`
			Summary string `json:"summary"`
			*complete.Report
			Origins []complete.VarOrigins `json:"origins"`
		}{in.name, rep.Summary(), rep, rep.Origins()}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // a rule's "ab,ab->ab" as written, as explain's JSON does
		err = enc.Encode(doc)
	} else {
		err = rep.WriteText(env.Stdout)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "distpass complete: %v\n", err)
		return ExitFail
	}
	return ExitOK
}
