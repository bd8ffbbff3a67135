package ir

import (
	"fmt"
	"slices"
	"strconv"
)

// Module is the unit every pass works on: named meshes, a main and an
// optional startup program, the params-grads list, and the process-group
// table that partitioning fills. Attrs are module-level facts that an
// importer keeps for its exporter, such as a Paddle program's version
// (`attr paddle.version = 2002002` in text); passes carry them along.
type Module struct {
	Name       string
	Attrs      Attrs
	Meshes     []*ProcessMesh
	Main       *Program
	Startup    *Program
	ParamGrads []ParamGrad
	Groups     []Group

	// gen hands out fresh op ids and names. It is state, not content:
	// equality ignores it and Clone copies it, so a clone continues the
	// same sequence as its original.
	gen *generator
}

// NewModule returns an empty module with an empty main program of one block.
func NewModule(name string) *Module {
	return &Module{Name: name, Main: NewProgram("main")}
}

// Mesh returns the mesh named name, or nil.
func (m *Module) Mesh(name string) *ProcessMesh {
	for _, pm := range m.Meshes {
		if pm.Name == name {
			return pm
		}
	}
	return nil
}

// Programs returns the module's programs in canonical order: main, then startup.
func (m *Module) Programs() []*Program {
	ps := make([]*Program, 0, 2)
	if m.Main != nil {
		ps = append(ps, m.Main)
	}
	if m.Startup != nil {
		ps = append(ps, m.Startup)
	}
	return ps
}

// Group returns the process group with id id, or nil.
func (m *Module) Group(id int) *Group {
	for i := range m.Groups {
		if m.Groups[i].ID == id {
			return &m.Groups[i]
		}
	}
	return nil
}

// ParamGrad pairs a parameter with its gradient var. Grad is empty when the
// parameter has no gradient.
type ParamGrad struct {
	Param string
	Grad  string
}

// Group is a process group: a stable ring id and its ranks in ascending order.
type Group struct {
	ID    int
	Ranks []int
}

// ProcessMesh is a named N-D arrangement of process ids (row-major), with a
// name for each dim.
type ProcessMesh struct {
	Name       string
	Shape      []int
	DimNames   []string
	ProcessIDs []int
}

// Program is a list of blocks; block 0 is the global block. Rank is the
// rank a partitioned program belongs to, or -1 for a serial program.
type Program struct {
	Name   string
	Rank   int
	Blocks []*Block
}

// NewProgram returns a serial program with one empty global block.
func NewProgram(name string) *Program {
	p := &Program{Name: name, Rank: -1}
	p.AddBlock(-1)
	return p
}

// Global returns block 0.
func (p *Program) Global() *Block { return p.Blocks[0] }

// Block returns block i, or nil when there is none.
func (p *Program) Block(i int) *Block {
	if i < 0 || i >= len(p.Blocks) {
		return nil
	}
	return p.Blocks[i]
}

// AddBlock appends a new block whose parent is parent and returns it.
func (p *Program) AddBlock(parent int) *Block {
	b := &Block{Index: len(p.Blocks), Parent: parent, Forward: -1}
	p.Blocks = append(p.Blocks, b)
	return b
}

// NumOps counts the ops in all blocks.
func (p *Program) NumOps() int {
	n := 0
	for _, b := range p.Blocks {
		if b != nil {
			n += len(b.Ops)
		}
	}
	return n
}

// LookupVar finds name in block b or, failing that, in its ancestors.
func (p *Program) LookupVar(b *Block, name string) *Var {
	for seen := 0; b != nil && seen <= len(p.Blocks); seen++ {
		if v := b.Var(name); v != nil {
			return v
		}
		b = p.Block(b.Parent)
	}
	return nil
}

// Block holds an ordered var table and an ordered op list. Parent is the
// enclosing block's index (-1 for block 0); Forward is, for a grad block,
// the index of the forward block it differentiates (-1 otherwise).
//
// Ops is a plain slice that passes rewrite freely. Vars are kept behind
// methods because the block indexes them by name.
type Block struct {
	Index   int
	Parent  int
	Forward int
	Ops     []*Op

	vars  []*Var
	index nameTable // of vars, always current
	gen   uint64    // counts changes of the var table
	binds uint64    // counts the changes that may unbind a name: removals, renames
}

// VarsVersion changes whenever the block's var table does (a var added,
// removed or renamed through the block), so that a cache of lookups can
// tell when it is stale.
func (b *Block) VarsVersion() uint64 { return b.gen }

// BindingsVersion changes whenever a name this block declares may stop
// naming the var it named: a var removed or renamed through the block.
// Adding a var leaves it: a block's names are unique, so an added var
// binds a name the block did not declare. A cache of the block's own
// vars by name stays good while it holds; one that resolved names
// through the block's ancestors, or remembers a name as undeclared,
// needs VarsVersion.
func (b *Block) BindingsVersion() uint64 { return b.binds }

// Vars returns the var table in order. The slice must not be modified;
// use AddVar, RemoveVar and RenameVar.
func (b *Block) Vars() []*Var { return b.vars }

// NumVars returns the number of vars declared in b.
func (b *Block) NumVars() int { return len(b.vars) }

// smallBlock is the var count below which a lookup scans the block's
// vars: there a scan costs less than hashing the name.
const smallBlock = 8

// VarIndex returns the position in Vars of the var named name, or -1
// when the block declares none.
func (b *Block) VarIndex(name string) int { return int(b.varIndex(name)) }

func (b *Block) varIndex(name string) int32 {
	if len(b.vars) < smallBlock {
		for i, v := range b.vars {
			if v != nil && v.name == name {
				return int32(i)
			}
		}
		return -1
	}
	return b.index.find(b.vars, name)
}

// Var returns the var named name declared in this block, or nil.
func (b *Block) Var(name string) *Var {
	if i := b.varIndex(name); i >= 0 {
		return b.vars[i]
	}
	return nil
}

// AddVar appends v to the var table. A var of the same name already in
// this block is an error. v must not be declared in another block: a
// block renames its vars in place (RenameVar), which the other block's
// table would not see.
func (b *Block) AddVar(v *Var) error {
	if v == nil {
		return fmt.Errorf("block %d: nil var", b.Index)
	}
	b.vars = append(b.vars, v)
	if b.index.insert(b.vars, len(b.vars)-1) >= 0 {
		b.vars = b.vars[:len(b.vars)-1]
		return fmt.Errorf("block %d: var %s declared twice", b.Index, quoteName(v.name))
	}
	b.gen++
	return nil
}

// addVarUnchecked appends v without the duplicate check: tests use it to
// build the broken blocks the verifier and encoders must reject. The
// table keeps the first var of a name.
func (b *Block) addVarUnchecked(v *Var) {
	b.vars = append(b.vars, v)
	b.index.insert(b.vars, len(b.vars)-1)
	b.gen++
	b.binds++ // a second var of a name: which one the name binds may change
}

// RemoveVar deletes the var named name from this block and reports
// whether it was there.
func (b *Block) RemoveVar(name string) bool {
	i := b.varIndex(name)
	if i < 0 {
		return false
	}
	if b.index.n == len(b.vars) {
		b.index.remove(b.vars, int(i), true)
		b.vars = slices.Delete(b.vars, int(i), int(i)+1)
	} else { // nil vars or names declared twice (addVarUnchecked)
		b.vars = slices.Delete(b.vars, int(i), int(i)+1)
		b.index.build(b.vars, nil)
	}
	b.gen++
	b.binds++
	return true
}

// RenameVar renames a var declared in this block. It does not touch ops.
func (b *Block) RenameVar(old, new string) error {
	i := b.varIndex(old)
	if i < 0 {
		return fmt.Errorf("block %d: no var %s", b.Index, quoteName(old))
	}
	if b.Var(new) != nil {
		return fmt.Errorf("block %d: var %s declared twice", b.Index, quoteName(new))
	}
	if b.index.n == len(b.vars) {
		b.index.remove(b.vars, int(i), false)
		b.vars[i].name = new
		b.index.insert(b.vars, int(i))
	} else {
		b.vars[i].name = new
		b.index.build(b.vars, nil)
	}
	b.gen++
	b.binds++
	return nil
}

// VarKind says whether a var is a plain value, a persistable, or a parameter
// (a persistable the optimizer trains).
type VarKind uint8

// The var kinds, spelled var, persist and param in text.
const (
	KindVar VarKind = iota
	KindPersist
	KindParam
)

func (k VarKind) String() string {
	switch k {
	case KindVar:
		return "var"
	case KindPersist:
		return "persist"
	case KindParam:
		return "param"
	}
	return "varkind(" + strconv.Itoa(int(k)) + ")"
}

// VarFlags are a var's boolean properties.
type VarFlags uint16

// The var flags, in printing (alphabetical) order.
const (
	FlagIsData VarFlags = 1 << iota
	FlagNeedCheckFeed
	FlagNeedClip
	FlagStopGradient
	FlagTrainable
	numFlags = iota
)

var flagNames = [numFlags]string{"is_data", "need_check_feed", "need_clip", "stop_gradient", "trainable"}

func flagByName(s string) (VarFlags, bool) {
	for i, n := range flagNames {
		if n == s {
			return 1 << i, true
		}
	}
	return 0, false
}

// Var is a named value: its kind, its type, its flags, further attributes
// (from imported programs), and an optional distribution.
type Var struct {
	name  string // changed only through Block.RenameVar, which keeps the block's table right
	Kind  VarKind
	Flags VarFlags // beside Kind: a Var is 120 bytes, not 136
	Type  Type
	Attrs Attrs
	Dist  *TensorDist
}

// Named returns a copy of v called name, for a block to declare
// (Block.AddVar). It is the one way to name a var: a declared var is
// renamed only through its block (Block.RenameVar), so that the block's
// index of names never goes stale.
func (v Var) Named(name string) Var {
	v.name = name
	return v
}

// Name returns the var's name.
func (v *Var) Name() string { return v.name }

// Persistable reports whether the var outlives one step (persist or param).
func (v *Var) Persistable() bool { return v.Kind != KindVar }

// Has reports whether all of f are set.
func (v *Var) Has(f VarFlags) bool { return v.Flags&f == f }

// Slot is a named argument list of an op, such as X: [a, b].
type Slot struct {
	Name string
	Args []string
}

// Op is an operation. ID is stable across passes (Paddle's original_id)
// and positive. Fwd is, for a grad op, the id of its forward op (0: none).
type Op struct {
	ID      int64
	Type    string
	Inputs  []Slot
	Outputs []Slot
	Attrs   Attrs
	Role    Role
	Fwd     int64
	Dist    *OpDist
}

// Input returns the args of input slot name.
func (o *Op) Input(name string) []string { return slotArgs(o.Inputs, name) }

// Output returns the args of output slot name.
func (o *Op) Output(name string) []string { return slotArgs(o.Outputs, name) }

func slotArgs(ss []Slot, name string) []string {
	for _, s := range ss {
		if s.Name == name {
			return s.Args
		}
	}
	return nil
}

// InputNames calls yield for every input arg in slot order.
func (o *Op) InputNames(yield func(string) bool) {
	for _, s := range o.Inputs {
		for _, a := range s.Args {
			if !yield(a) {
				return
			}
		}
	}
}

// OutputNames calls yield for every output arg in slot order.
func (o *Op) OutputNames(yield func(string) bool) {
	for _, s := range o.Outputs {
		for _, a := range s.Args {
			if !yield(a) {
				return
			}
		}
	}
}

// Reads reports whether name is one of the op's input args.
func (o *Op) Reads(name string) bool {
	for a := range o.InputNames {
		if a == name {
			return true
		}
	}
	return false
}

// SubBlocks calls yield for each block index the op's attrs refer to.
func (o *Op) SubBlocks(yield func(int) bool) {
	for _, a := range o.Attrs {
		switch v := a.Value.(type) {
		case BlockRef:
			if !yield(int(v)) {
				return
			}
		case BlockRefs:
			for _, i := range v {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// String returns a short form for messages: "op 9 matmul_v2_grad".
func (o *Op) String() string { return "op " + strconv.FormatInt(o.ID, 10) + " " + o.Type }

// RenameVars renames vars everywhere in the module: declarations in every
// block of every program, op arguments, op dist arguments and the
// params-grads list. rename maps a name to its new name (return it
// unchanged to keep it); all renames happen at once, so a permutation of
// names is fine. Two vars of one block ending with the same name is an
// error, and leaves the module unchanged.
func (m *Module) RenameVars(rename func(string) string) error {
	progs := m.Programs()
	for _, p := range progs {
		for _, b := range p.Blocks {
			seen := make(map[string]bool, len(b.vars))
			for _, v := range b.vars {
				n := rename(v.name)
				if seen[n] {
					return fmt.Errorf("%s block %d: renaming makes two vars named %s", p.Name, b.Index, quoteName(n))
				}
				seen[n] = true
			}
		}
	}
	for _, p := range progs {
		for _, b := range p.Blocks {
			for _, v := range b.vars {
				v.name = rename(v.name)
			}
			b.index.build(b.vars, nil)
			b.gen++
			b.binds++
			for _, op := range b.Ops {
				for _, ss := range [2][]Slot{op.Inputs, op.Outputs} {
					for i := range ss {
						for j, a := range ss[i].Args {
							ss[i].Args[j] = rename(a)
						}
					}
				}
				if d := op.Dist; d != nil {
					for _, as := range [2][]ArgDist{d.Inputs, d.Outputs} {
						for i := range as {
							as[i].Name = rename(as[i].Name)
						}
					}
				}
			}
		}
	}
	for i := range m.ParamGrads {
		m.ParamGrads[i].Param = rename(m.ParamGrads[i].Param)
		if m.ParamGrads[i].Grad != "" {
			m.ParamGrads[i].Grad = rename(m.ParamGrads[i].Grad)
		}
	}
	m.gen = nil // the names it handed out are stale
	return nil
}
