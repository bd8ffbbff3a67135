package ir

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxRank is the largest rank (process id) a mesh may hold: the text
// format reads ranks as 32-bit integers.
const MaxRank = math.MaxInt32

// MaxMeshRanks is the most processes one mesh may hold (2^20, about a
// million: several times the largest training clusters built). Verify
// refuses a larger mesh, and passes that build meshes (such as
// annotate-data-parallel's shape=N) refuse to build one, so that a typo
// in a size is an error rather than gigabytes of rank lists, groups and
// per-rank programs.
const MaxMeshRanks = 1 << 20

// Size returns the number of processes in the mesh.
func (pm *ProcessMesh) Size() int { return len(pm.ProcessIDs) }

// NDim returns the number of mesh dims.
func (pm *ProcessMesh) NDim() int { return len(pm.Shape) }

// DimIndex returns the position of the dim named name, or -1.
func (pm *ProcessMesh) DimIndex(name string) int { return slices.Index(pm.DimNames, name) }

// DimSize returns the size of the dim named name. A missing dim is an
// error, not 0, because a silent 0 would become a division by zero or an
// empty group far from the mistake.
func (pm *ProcessMesh) DimSize(name string) (int, error) {
	i := pm.DimIndex(name)
	if i < 0 {
		return 0, pm.errorf("no dim %s (dims %s)", quoteName(name), formatNames(pm.DimNames))
	}
	if i >= len(pm.Shape) {
		return 0, pm.errDimNames()
	}
	return pm.Shape[i], nil
}

// Contains reports whether rank is one of the mesh's processes.
func (pm *ProcessMesh) Contains(rank int) bool { return slices.Contains(pm.ProcessIDs, rank) }

// Coord returns rank's coordinate: its position in ProcessIDs unravelled
// row-major over Shape. It allocates only the result.
func (pm *ProcessMesh) Coord(rank int) ([]int, error) {
	if err := pm.check(); err != nil {
		return nil, err
	}
	i, err := pm.position(rank)
	if err != nil {
		return nil, err
	}
	c := make([]int, len(pm.Shape))
	for d := len(pm.Shape) - 1; d >= 0; d-- {
		c[d] = i % pm.Shape[d]
		i /= pm.Shape[d]
	}
	return c, nil
}

// RankAt returns the rank at coordinate coord; it inverts Coord.
func (pm *ProcessMesh) RankAt(coord []int) (int, error) {
	if err := pm.check(); err != nil {
		return 0, err
	}
	if len(coord) != len(pm.Shape) {
		return 0, pm.errorf("coordinate %s has %d entries for %d dims", FormatInts(coord), len(coord), len(pm.Shape))
	}
	i := 0
	for d, c := range coord {
		if c < 0 || c >= pm.Shape[d] {
			return 0, pm.errorf("coordinate %s: entry %d is out of range [0, %d)", FormatInts(coord), d, pm.Shape[d])
		}
		i = i*pm.Shape[d] + c
	}
	return pm.ProcessIDs[i], nil
}

// Group returns the ranks that share rank's coordinate on every dim but
// axis: the process group rank talks to for a collective along axis. The
// ranks are sorted by id, not by mesh position, so that the same set always
// gives the same group whatever mesh it came from. It allocates only the
// result.
func (pm *ProcessMesh) Group(axis, rank int) ([]int, error) {
	if err := pm.check(); err != nil {
		return nil, err
	}
	if axis < 0 || axis >= len(pm.Shape) {
		return nil, pm.errorf("axis %d is out of range for %d dims", axis, len(pm.Shape))
	}
	i, err := pm.position(rank)
	if err != nil {
		return nil, err
	}
	stride := pm.stride(axis)
	size := pm.Shape[axis]
	base := i - (i/stride)%size*stride
	g := make([]int, size)
	for k := range g {
		g[k] = pm.ProcessIDs[base+k*stride]
	}
	slices.Sort(g)
	return g, nil
}

// Groups returns every group along axis, one per slice of the mesh, each
// sorted by id as Group sorts it. The groups come in the order of the mesh
// position of their member at coordinate 0 on axis, so the result depends
// only on the mesh. It returns nil when axis is out of range or the mesh is
// malformed (see Validate).
func (pm *ProcessMesh) Groups(axis int) [][]int {
	if pm.check() != nil || axis < 0 || axis >= len(pm.Shape) {
		return nil
	}
	stride := pm.stride(axis)
	size := pm.Shape[axis]
	outer := len(pm.ProcessIDs) / (size * stride)
	gs := make([][]int, 0, outer*stride)
	for o := range outer {
		for in := range stride {
			base := o*size*stride + in
			g := make([]int, size)
			for k := range g {
				g[k] = pm.ProcessIDs[base+k*stride]
			}
			slices.Sort(g)
			gs = append(gs, g)
		}
	}
	return gs
}

// SubMesh returns the slice of the mesh at index along dim, with dim
// removed: the remaining dims keep their order and names, and the ranks
// their row-major order. The result keeps the parent's name, because it
// is not declared in any module and a made-up name could clash with one
// that is. Slicing a 1-D mesh gives a 0-D mesh of one process; the methods
// accept it, but Validate, which checks declared meshes, does not.
func (pm *ProcessMesh) SubMesh(dim, index int) (*ProcessMesh, error) {
	if err := pm.check(); err != nil {
		return nil, err
	}
	if dim < 0 || dim >= len(pm.Shape) {
		return nil, pm.errorf("dim %d is out of range for %d dims", dim, len(pm.Shape))
	}
	size := pm.Shape[dim]
	if index < 0 || index >= size {
		return nil, pm.errorf("index %d is out of range for dim %s of size %d", index, quoteName(pm.DimNames[dim]), size)
	}
	stride := pm.stride(dim)
	outer := len(pm.ProcessIDs) / (size * stride)
	ids := make([]int, 0, outer*stride)
	for o := range outer {
		start := (o*size + index) * stride
		ids = append(ids, pm.ProcessIDs[start:start+stride]...)
	}
	return &ProcessMesh{
		Name:       pm.Name,
		Shape:      slices.Delete(slices.Clone(pm.Shape), dim, dim+1),
		DimNames:   slices.Delete(slices.Clone(pm.DimNames), dim, dim+1),
		ProcessIDs: ids,
	}, nil
}

// SubMeshByName is SubMesh with the dim given by name.
func (pm *ProcessMesh) SubMeshByName(dimName string, index int) (*ProcessMesh, error) {
	if _, err := pm.DimSize(dimName); err != nil {
		return nil, err
	}
	return pm.SubMesh(pm.DimIndex(dimName), index)
}

// PipelineStage returns the pipeline stage of global that holds pm's
// first rank: the SubMeshByName("pp", i) slice for the first i that
// contains it. Without a global mesh or a "pp" dim in it there are no
// stages, and pm itself is its stage. A first rank in no stage is an error
// rather than a fallback to pm, since it means pm and global disagree
// about the cluster.
func (pm *ProcessMesh) PipelineStage(global *ProcessMesh) (*ProcessMesh, error) {
	if global == nil || global.DimIndex("pp") < 0 {
		return pm, nil
	}
	if pm == nil {
		return nil, errNilMesh
	}
	if len(pm.ProcessIDs) == 0 {
		return nil, pm.errorf("no processes, so no pipeline stage in mesh %s", quoteName(global.Name))
	}
	first := pm.ProcessIDs[0]
	n, err := global.DimSize("pp")
	if err != nil {
		return nil, err
	}
	for i := range n {
		stage, err := global.SubMeshByName("pp", i)
		if err != nil {
			return nil, err
		}
		if stage.Contains(first) {
			return stage, nil
		}
	}
	return nil, pm.errorf("no pp stage of mesh %s contains its first rank %d", quoteName(global.Name), first)
}

// Validate reports everything wrong with the mesh itself, one error per
// problem, joined. Declared meshes should pass it; the other methods only
// guard against what would make them index out of range.
func (pm *ProcessMesh) Validate() error {
	if pm == nil {
		return errNilMesh
	}
	var errs []error
	if len(pm.Shape) == 0 {
		errs = append(errs, pm.errorf("empty shape"))
	}
	n, sizesOK := 1, true
	for i, s := range pm.Shape {
		switch {
		case s <= 0:
			errs = append(errs, pm.errSize(i))
			sizesOK = false
		case sizesOK && n > math.MaxInt/s:
			errs = append(errs, pm.errOverflow())
			sizesOK = false
		case sizesOK:
			n *= s
		}
	}
	if len(pm.Shape) > 0 && sizesOK && n > MaxMeshRanks {
		errs = append(errs, pm.errorf("shape %s holds %d processes, more than ir.MaxMeshRanks (%d)", FormatInts(pm.Shape), n, MaxMeshRanks))
	} else if len(pm.Shape) > 0 && sizesOK && n != len(pm.ProcessIDs) {
		errs = append(errs, pm.errCount(n))
	}
	if len(pm.DimNames) != len(pm.Shape) {
		errs = append(errs, pm.errDimNames())
	}
	for i, name := range pm.DimNames {
		if name == "" {
			errs = append(errs, pm.errorf("dim %d has an empty name", i))
			continue
		}
		if j := slices.Index(pm.DimNames[:i], name); j >= 0 {
			errs = append(errs, pm.errorf("dims %d and %d are both named %s", j, i, quoteName(name)))
		}
	}
	ids := slices.Clone(pm.ProcessIDs)
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		if ids[i] < 0 {
			errs = append(errs, pm.errorf("rank %d is negative", ids[i]))
		} else if ids[i] > MaxRank {
			errs = append(errs, pm.errorf("rank %d is above ir.MaxRank (%d)", ids[i], MaxRank))
		}
		if j-i > 1 {
			errs = append(errs, pm.errorf("rank %d appears %d times", ids[i], j-i))
		}
		i = j
	}
	return errors.Join(errs...)
}

// String returns the mesh as the text format declares it, without the
// "mesh" keyword: "world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]".
func (pm *ProcessMesh) String() string {
	if pm == nil {
		return "<nil>"
	}
	var p printer
	p.name(pm.Name)
	p.str(" shape ")
	p.ints(pm.Shape)
	p.str(" dims ")
	p.names(pm.DimNames)
	p.str(" ranks ")
	p.ints(pm.ProcessIDs)
	return string(p.buf)
}

var errNilMesh = errors.New("nil mesh")

// check reports the first problem that would make indexing the mesh go
// out of range: a dim-name list of the wrong length, a non-positive size,
// or a product of sizes that overflows or differs from the number of
// ranks. Unlike Validate it allows a 0-D mesh of one process (which
// SubMesh can produce) and ignores negative and duplicate ranks, which are
// wrong but harmless here. It costs O(NDim) and does not allocate when the
// mesh is fine, because Coord and Group run it on every call.
func (pm *ProcessMesh) check() error {
	if pm == nil {
		return errNilMesh
	}
	if len(pm.DimNames) != len(pm.Shape) {
		return pm.errDimNames()
	}
	n := 1
	for i, s := range pm.Shape {
		if s <= 0 {
			return pm.errSize(i)
		}
		if n > math.MaxInt/s {
			return pm.errOverflow()
		}
		n *= s
	}
	if n != len(pm.ProcessIDs) {
		return pm.errCount(n)
	}
	return nil
}

// position returns the index of rank in ProcessIDs.
func (pm *ProcessMesh) position(rank int) (int, error) {
	i := slices.Index(pm.ProcessIDs, rank)
	if i < 0 {
		return 0, fmt.Errorf("rank %d is not in mesh %s %s", rank, quoteName(pm.Name), formatRanksShort(pm.ProcessIDs))
	}
	return i, nil
}

// stride returns the distance in ProcessIDs between neighbours along dim.
func (pm *ProcessMesh) stride(dim int) int {
	s := 1
	for _, n := range pm.Shape[dim+1:] {
		s *= n
	}
	return s
}

func (pm *ProcessMesh) errorf(format string, args ...any) error {
	return errors.New("mesh " + quoteName(pm.Name) + ": " + fmt.Sprintf(format, args...))
}

func (pm *ProcessMesh) errDimNames() error {
	return pm.errorf("%d dim names for %d dims", len(pm.DimNames), len(pm.Shape))
}

func (pm *ProcessMesh) errSize(dim int) error {
	return pm.errorf("dim %d has size %d; sizes must be positive", dim, pm.Shape[dim])
}

func (pm *ProcessMesh) errOverflow() error {
	return pm.errorf("shape %s holds more processes than an int can count", FormatInts(pm.Shape))
}

func (pm *ProcessMesh) errCount(n int) error {
	return pm.errorf("shape %s holds %d processes but %d ranks are given", FormatInts(pm.Shape), n, len(pm.ProcessIDs))
}

func (p *printer) names(ss []string) {
	p.byte('[')
	for i, s := range ss {
		if i > 0 {
			p.str(", ")
		}
		p.name(s)
	}
	p.byte(']')
}

// FormatInts spells a list of ints as the text format does: [0, -1].
func FormatInts(xs []int) string {
	var p printer
	p.ints(xs)
	return string(p.buf)
}

// FormatShape spells a shape as the text format does: [8, -1, 64].
func FormatShape(dims []int64) string {
	var p printer
	p.ints64(dims)
	return string(p.buf)
}

func formatNames(ss []string) string {
	var p printer
	p.names(ss)
	return string(p.buf)
}

// maxRanksShown bounds the ranks an error message lists, so that a miss on
// a mesh of thousands of processes stays one readable line.
const maxRanksShown = 16

// formatRanksShort is formatInts for messages: past maxRanksShown ranks it
// lists the first ones and says how many it left out.
func formatRanksShort(ids []int) string {
	if len(ids) <= maxRanksShown {
		return FormatInts(ids)
	}
	var p printer
	p.byte('[')
	for _, id := range ids[:maxRanksShown] {
		p.int(int64(id))
		p.str(", ")
	}
	p.str("... ")
	p.int(int64(len(ids) - maxRanksShown))
	p.str(" more]")
	return string(p.buf)
}
