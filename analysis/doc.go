// Package analysis computes read-only facts about an ir.Module, on
// demand and cached, for the passes that transform it: which ops define
// and use each var, what role each op plays, which forward op and var
// each grad op and grad var belongs to, whether the module is completely
// annotated, and each var's local shape on a rank.
//
// # Analyzers
//
// An Analyzer is a value: a kebab-case Name ("def-use",
// "local-shapes{rank=3}"), a Doc, the analyzers it Requires, and a Run
// function that receives a Pass (the module and the results of its
// requirements) and returns a result or an error. Validate checks a set
// of analyzers up front: names, docs, acyclic requirements.
//
// A Cache computes the results for one module, once each, and keeps them
// until they are invalidated:
//
//	cache := analysis.NewCache(m)
//	du, err := analysis.Get[*analysis.DefUseInfo](cache, analysis.DefUse)
//	...
//	cache.Invalidate(pass.Preserved()...) // after each pass
//
// Results are keyed by name, so two analyzers with one name are one
// analysis (LocalShapes(3) returns the same analyzer each time anyway).
// Errors are cached like results. Invalidate keeps only what a pass
// preserved, and drops a preserved analysis whose requirement is not
// kept; Closure gives the set to preserve for analyses kept true. A
// Cache is safe for concurrent use, and computes distinct analyses in
// parallel. Stats reports hits and misses per analyzer.
//
// # The analyses
//
//	Index           *IndexInfo          names resolved: vars numbered and indexed, op args resolved, ops by id
//	DefUse          *DefUseInfo         Defs, Uses of each var; Users of an op
//	Roles           *RoleInfo           each op's RoleClass; first loss and loss-grad op and counts per block
//	GradMaps        *GradInfo           grad op -> forward op, grad var -> var, param <-> grad
//	Annotations     *AnnotationReport   every missing or unusable dist annotation
//	LocalShapes(r)  *LocalShapeInfo     each var's shape on rank r, and whether r is in its mesh
//
// Index does the bulk of the name hashing, once; the others require it
// and work on the numbers it hands out. Each analysis costs O(ops + vars +
// args) time and a few dozen allocations, a number that grows only
// logarithmically with the module; see BenchmarkAnalyses.
//
// Ops are located by OpRef (block index and position) within their
// program, vars identified by VarID (program, declaring block, name).
// Both stay valid while the result that gave them out is cached: a pass
// that moves ops or vars does not preserve the analyses.
//
// The analyses read the module and never write it, not even the blocks'
// lazily built name indexes, so several caches may analyse one module
// from several goroutines. They do not verify it either: names that
// resolve to nothing and other broken rules are skipped or reported as
// the analysis says, never a panic; ir.Verify reports them.
package analysis
