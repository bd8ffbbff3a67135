package ir

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func mesh(name string, shape []int, dims []string, ids []int) *ProcessMesh {
	return &ProcessMesh{Name: name, Shape: shape, DimNames: dims, ProcessIDs: ids}
}

func iota0(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// The meshes most tests share. odd has ids out of order, so that a group
// sorted by id differs from one in mesh order.
func world() *ProcessMesh { return mesh("world", []int{2, 2}, []string{"dp", "mp"}, iota0(4)) }
func m24() *ProcessMesh   { return mesh("m24", []int{2, 4}, []string{"dp", "mp"}, iota0(8)) }
func odd() *ProcessMesh {
	return mesh("odd", []int{2, 3}, []string{"x", "y"}, []int{2, 4, 5, 0, 1, 3})
}
func m234() *ProcessMesh {
	return mesh("m234", []int{2, 3, 4}, []string{"pp", "dp", "mp"}, iota0(24))
}

// malformed lists meshes that every method must survive, with the error
// the cheap check gives for each.
var malformed = []struct {
	pm   *ProcessMesh
	want string
}{
	{nil, "nil mesh"},
	{&ProcessMesh{}, "mesh \"\": shape [] holds 1 processes but 0 ranks are given"},
	{mesh("m", []int{2, 0}, []string{"a", "b"}, nil), "mesh m: dim 1 has size 0; sizes must be positive"},
	{mesh("m", []int{-2, 2}, []string{"a", "b"}, []int{0, 1, 2, 3}), "mesh m: dim 0 has size -2; sizes must be positive"},
	{mesh("m", []int{2, 2}, []string{"a", "b"}, []int{0, 1, 2}), "mesh m: shape [2, 2] holds 4 processes but 3 ranks are given"},
	{mesh("m", []int{2, 2}, []string{"a"}, []int{0, 1, 2, 3}), "mesh m: 1 dim names for 2 dims"},
	{mesh("m", []int{2}, []string{"a", "b"}, []int{0, 1}), "mesh m: 2 dim names for 1 dims"},
	{mesh("m", []int{1 << 40, 1 << 40}, []string{"a", "b"}, []int{0}), "mesh m: shape [1099511627776, 1099511627776] holds more processes than an int can count"},
}

func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", what, want)
		return
	}
	if err.Error() != want {
		t.Errorf("%s: error\n got %q\nwant %q", what, err.Error(), want)
	}
}

func sameMesh(a, b *ProcessMesh) bool {
	return a.Name == b.Name && slices.Equal(a.Shape, b.Shape) &&
		slices.Equal(a.DimNames, b.DimNames) && slices.Equal(a.ProcessIDs, b.ProcessIDs)
}

func TestProcessMeshSizeNDim(t *testing.T) {
	for _, tc := range []struct {
		pm         *ProcessMesh
		size, ndim int
	}{
		{world(), 4, 2},
		{m24(), 8, 2},
		{m234(), 24, 3},
		{&ProcessMesh{}, 0, 0},
	} {
		if got := tc.pm.Size(); got != tc.size {
			t.Errorf("%v: Size() = %d, want %d", tc.pm, got, tc.size)
		}
		if got := tc.pm.NDim(); got != tc.ndim {
			t.Errorf("%v: NDim() = %d, want %d", tc.pm, got, tc.ndim)
		}
	}
}

func TestProcessMeshDimIndex(t *testing.T) {
	pm := m234()
	for _, tc := range []struct {
		name string
		want int
	}{
		{"pp", 0}, {"dp", 1}, {"mp", 2}, {"sp", -1}, {"", -1}, {"PP", -1},
	} {
		if got := pm.DimIndex(tc.name); got != tc.want {
			t.Errorf("DimIndex(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestProcessMeshDimSize(t *testing.T) {
	for _, tc := range []struct {
		pm   *ProcessMesh
		dim  string
		want int
	}{
		{m24(), "dp", 2},
		{m24(), "mp", 4},
		{m234(), "pp", 2},
		{m234(), "dp", 3},
	} {
		got, err := tc.pm.DimSize(tc.dim)
		if err != nil || got != tc.want {
			t.Errorf("%v: DimSize(%q) = %d, %v; want %d", tc.pm, tc.dim, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		pm   *ProcessMesh
		dim  string
		want string
	}{
		{world(), "pp", "mesh world: no dim pp (dims [dp, mp])"},
		{world(), "", `mesh world: no dim "" (dims [dp, mp])`},
		{mesh("my mesh", []int{1}, []string{"a b"}, []int{0}), "x", `mesh "my mesh": no dim x (dims ["a b"])`},
		{&ProcessMesh{}, "x", `mesh "": no dim x (dims [])`},
		{mesh("m", []int{2}, []string{"a", "b"}, []int{0, 1}), "b", "mesh m: 2 dim names for 1 dims"},
	} {
		_, err := tc.pm.DimSize(tc.dim)
		checkErr(t, "DimSize("+tc.dim+")", err, tc.want)
	}
}

func TestProcessMeshContains(t *testing.T) {
	pm := odd()
	for _, r := range []int{0, 1, 2, 3, 4, 5} {
		if !pm.Contains(r) {
			t.Errorf("Contains(%d) = false", r)
		}
	}
	for _, r := range []int{-1, 6, 100} {
		if pm.Contains(r) {
			t.Errorf("Contains(%d) = true", r)
		}
	}
	if (&ProcessMesh{}).Contains(0) {
		t.Errorf("empty mesh contains 0")
	}
}

func TestProcessMeshCoord(t *testing.T) {
	for _, tc := range []struct {
		pm   *ProcessMesh
		rank int
		want []int
	}{
		{world(), 0, []int{0, 0}},
		{world(), 1, []int{0, 1}},
		{world(), 2, []int{1, 0}},
		{world(), 3, []int{1, 1}},
		{m24(), 6, []int{1, 2}},
		{m234(), 23, []int{1, 2, 3}},
		{m234(), 13, []int{1, 0, 1}},
		// Coord follows mesh position, not id order.
		{odd(), 2, []int{0, 0}},
		{odd(), 5, []int{0, 2}},
		{odd(), 0, []int{1, 0}},
		{odd(), 3, []int{1, 2}},
		{mesh("one", []int{}, []string{}, []int{7}), 7, []int{}},
	} {
		got, err := tc.pm.Coord(tc.rank)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: Coord(%d) = %v, %v; want %v", tc.pm, tc.rank, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		pm   *ProcessMesh
		rank int
		want string
	}{
		{world(), 9, "rank 9 is not in mesh world [0, 1, 2, 3]"},
		{world(), -1, "rank -1 is not in mesh world [0, 1, 2, 3]"},
		{mesh("", []int{1}, []string{"x"}, []int{5}), 0, `rank 0 is not in mesh "" [5]`},
		{mesh("big", []int{20}, []string{"x"}, iota0(20)), 99,
			"rank 99 is not in mesh big [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ... 4 more]"},
		{mesh("sixteen", []int{16}, []string{"x"}, iota0(16)), 99,
			"rank 99 is not in mesh sixteen [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]"},
	} {
		_, err := tc.pm.Coord(tc.rank)
		checkErr(t, "Coord", err, tc.want)
	}
	for _, tc := range malformed {
		_, err := tc.pm.Coord(0)
		checkErr(t, "Coord on malformed mesh", err, tc.want)
	}
}

func TestProcessMeshRankAt(t *testing.T) {
	for _, tc := range []struct {
		pm    *ProcessMesh
		coord []int
		want  int
	}{
		{world(), []int{0, 0}, 0},
		{world(), []int{1, 0}, 2},
		{m24(), []int{1, 3}, 7},
		{m234(), []int{1, 2, 3}, 23},
		{odd(), []int{1, 0}, 0},
		{odd(), []int{0, 1}, 4},
		{mesh("one", []int{}, []string{}, []int{7}), nil, 7},
	} {
		got, err := tc.pm.RankAt(tc.coord)
		if err != nil || got != tc.want {
			t.Errorf("%v: RankAt(%v) = %d, %v; want %d", tc.pm, tc.coord, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		pm    *ProcessMesh
		coord []int
		want  string
	}{
		{world(), []int{0}, "mesh world: coordinate [0] has 1 entries for 2 dims"},
		{world(), []int{0, 0, 0}, "mesh world: coordinate [0, 0, 0] has 3 entries for 2 dims"},
		{world(), nil, "mesh world: coordinate [] has 0 entries for 2 dims"},
		{m24(), []int{0, 4}, "mesh m24: coordinate [0, 4]: entry 1 is out of range [0, 4)"},
		{m24(), []int{-1, 0}, "mesh m24: coordinate [-1, 0]: entry 0 is out of range [0, 2)"},
	} {
		_, err := tc.pm.RankAt(tc.coord)
		checkErr(t, "RankAt", err, tc.want)
	}
	for _, tc := range malformed {
		_, err := tc.pm.RankAt([]int{0, 0})
		checkErr(t, "RankAt on malformed mesh", err, tc.want)
	}
}

func TestProcessMeshGroup(t *testing.T) {
	for _, tc := range []struct {
		pm         *ProcessMesh
		axis, rank int
		want       []int
	}{
		{m24(), 1, 3, []int{0, 1, 2, 3}},
		{m24(), 0, 3, []int{3, 7}},
		{m24(), 1, 6, []int{4, 5, 6, 7}},
		{m24(), 0, 4, []int{0, 4}},
		{world(), 0, 0, []int{0, 2}},
		{world(), 1, 0, []int{0, 1}},
		{world(), 0, 3, []int{1, 3}},
		{m234(), 0, 5, []int{5, 17}},
		{m234(), 1, 5, []int{1, 5, 9}},
		{m234(), 2, 5, []int{4, 5, 6, 7}},
		// [[2, 4, 5], [0, 1, 3]]: groups are sorted by id, not mesh order.
		{odd(), 1, 2, []int{2, 4, 5}},
		{odd(), 1, 1, []int{0, 1, 3}},
		{odd(), 0, 2, []int{0, 2}},
		{odd(), 0, 4, []int{1, 4}},
		{odd(), 0, 3, []int{3, 5}},
		{mesh("line", []int{3}, []string{"x"}, []int{9, 1, 5}), 0, 5, []int{1, 5, 9}},
	} {
		got, err := tc.pm.Group(tc.axis, tc.rank)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: Group(%d, %d) = %v, %v; want %v", tc.pm, tc.axis, tc.rank, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		pm         *ProcessMesh
		axis, rank int
		want       string
	}{
		{m24(), 2, 0, "mesh m24: axis 2 is out of range for 2 dims"},
		{m24(), -1, 0, "mesh m24: axis -1 is out of range for 2 dims"},
		{m24(), 0, 8, "rank 8 is not in mesh m24 [0, 1, 2, 3, 4, 5, 6, 7]"},
		{mesh("one", []int{}, []string{}, []int{7}), 0, 7, "mesh one: axis 0 is out of range for 0 dims"},
	} {
		_, err := tc.pm.Group(tc.axis, tc.rank)
		checkErr(t, "Group", err, tc.want)
	}
	for _, tc := range malformed {
		_, err := tc.pm.Group(0, 0)
		checkErr(t, "Group on malformed mesh", err, tc.want)
	}
}

func TestProcessMeshGroups(t *testing.T) {
	for _, tc := range []struct {
		pm   *ProcessMesh
		axis int
		want [][]int
	}{
		{m24(), 0, [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
		{m24(), 1, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{world(), 0, [][]int{{0, 2}, {1, 3}}},
		// Ordered by the mesh position of each group's coordinate-0
		// member, each group sorted by id.
		{odd(), 0, [][]int{{0, 2}, {1, 4}, {3, 5}}},
		{odd(), 1, [][]int{{2, 4, 5}, {0, 1, 3}}},
		{m234(), 1, [][]int{
			{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11},
			{12, 16, 20}, {13, 17, 21}, {14, 18, 22}, {15, 19, 23},
		}},
		{m234(), 0, [][]int{
			{0, 12}, {1, 13}, {2, 14}, {3, 15}, {4, 16}, {5, 17},
			{6, 18}, {7, 19}, {8, 20}, {9, 21}, {10, 22}, {11, 23},
		}},
		{m24(), 2, nil},
		{m24(), -1, nil},
	} {
		got := tc.pm.Groups(tc.axis)
		if !slices.EqualFunc(got, tc.want, slices.Equal) || (got == nil) != (tc.want == nil) {
			t.Errorf("%v: Groups(%d) = %v, want %v", tc.pm, tc.axis, got, tc.want)
		}
	}
	for _, tc := range malformed {
		if got := tc.pm.Groups(0); got != nil {
			t.Errorf("Groups(0) on malformed mesh %v = %v, want nil", tc.pm, got)
		}
	}
}

func TestProcessMeshSubMesh(t *testing.T) {
	for _, tc := range []struct {
		pm         *ProcessMesh
		dim, index int
		want       *ProcessMesh
	}{
		{m234(), 0, 1, mesh("m234", []int{3, 4}, []string{"dp", "mp"}, []int{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23})},
		{m234(), 1, 2, mesh("m234", []int{2, 4}, []string{"pp", "mp"}, []int{8, 9, 10, 11, 20, 21, 22, 23})},
		{m234(), 2, 3, mesh("m234", []int{2, 3}, []string{"pp", "dp"}, []int{3, 7, 11, 15, 19, 23})},
		{world(), 0, 0, mesh("world", []int{2}, []string{"mp"}, []int{0, 1})},
		{world(), 1, 0, mesh("world", []int{2}, []string{"dp"}, []int{0, 2})},
		{odd(), 0, 1, mesh("odd", []int{3}, []string{"y"}, []int{0, 1, 3})},
		{odd(), 1, 2, mesh("odd", []int{2}, []string{"x"}, []int{5, 3})},
		{mesh("line", []int{3}, []string{"pp"}, []int{9, 1, 5}), 0, 1, mesh("line", []int{}, []string{}, []int{1})},
	} {
		before := tc.pm.Clone()
		got, err := tc.pm.SubMesh(tc.dim, tc.index)
		if err != nil || !sameMesh(got, tc.want) {
			t.Errorf("%v: SubMesh(%d, %d) = %v, %v; want %v", tc.pm, tc.dim, tc.index, got, err, tc.want)
		}
		if !sameMesh(tc.pm, before) {
			t.Errorf("SubMesh(%d, %d) changed its receiver to %v", tc.dim, tc.index, tc.pm)
		}
	}
	for _, tc := range []struct {
		pm         *ProcessMesh
		dim, index int
		want       string
	}{
		{m234(), 3, 0, "mesh m234: dim 3 is out of range for 3 dims"},
		{m234(), -1, 0, "mesh m234: dim -1 is out of range for 3 dims"},
		{m234(), 1, 3, "mesh m234: index 3 is out of range for dim dp of size 3"},
		{m234(), 0, -1, "mesh m234: index -1 is out of range for dim pp of size 2"},
	} {
		_, err := tc.pm.SubMesh(tc.dim, tc.index)
		checkErr(t, "SubMesh", err, tc.want)
	}
	for _, tc := range malformed {
		_, err := tc.pm.SubMesh(0, 0)
		checkErr(t, "SubMesh on malformed mesh", err, tc.want)
	}
}

func TestProcessMeshSubMeshByName(t *testing.T) {
	got, err := m234().SubMeshByName("mp", 0)
	want := mesh("m234", []int{2, 3}, []string{"pp", "dp"}, []int{0, 4, 8, 12, 16, 20})
	if err != nil || !sameMesh(got, want) {
		t.Errorf("SubMeshByName(mp, 0) = %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct {
		pm    *ProcessMesh
		dim   string
		index int
		want  string
	}{
		{m234(), "sp", 0, "mesh m234: no dim sp (dims [pp, dp, mp])"},
		{m234(), "mp", 4, "mesh m234: index 4 is out of range for dim mp of size 4"},
		{mesh("m", []int{2}, []string{"a", "b"}, []int{0, 1}), "a", 0, "mesh m: 2 dim names for 1 dims"},
		{mesh("m", []int{2, 2}, []string{"a", "b"}, []int{0, 1, 2}), "a", 0, "mesh m: shape [2, 2] holds 4 processes but 3 ranks are given"},
	} {
		_, err := tc.pm.SubMeshByName(tc.dim, tc.index)
		checkErr(t, "SubMeshByName", err, tc.want)
	}
}

func TestProcessMeshPipelineStage(t *testing.T) {
	global := mesh("world", []int{2, 2, 2}, []string{"pp", "dp", "mp"}, iota0(8))
	stage0 := mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{0, 1, 2, 3})
	stage1 := mesh("world", []int{2, 2}, []string{"dp", "mp"}, []int{4, 5, 6, 7})
	// pp need not be the first dim: here the stages are the columns.
	cols := mesh("cols", []int{2, 2}, []string{"dp", "pp"}, []int{0, 1, 2, 3})
	purepp := mesh("pp4", []int{4}, []string{"pp"}, []int{10, 11, 12, 13})
	for _, tc := range []struct {
		name   string
		pm     *ProcessMesh
		global *ProcessMesh
		want   *ProcessMesh
	}{
		{"whole stage", mesh("s1", []int{2, 2}, []string{"dp", "mp"}, []int{4, 5, 6, 7}), global, stage1},
		{"part of stage", mesh("s", []int{1}, []string{"x"}, []int{5}), global, stage1},
		{"first rank decides", mesh("s", []int{2}, []string{"x"}, []int{2, 7}), global, stage0},
		{"pp second dim", mesh("s", []int{1}, []string{"x"}, []int{3}), cols, mesh("cols", []int{2}, []string{"dp"}, []int{1, 3})},
		{"pure pp", mesh("s", []int{1}, []string{"x"}, []int{12}), purepp, mesh("pp4", []int{}, []string{}, []int{12})},
	} {
		got, err := tc.pm.PipelineStage(tc.global)
		if err != nil || !sameMesh(got, tc.want) {
			t.Errorf("%s: PipelineStage = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}

	// Without stages the mesh is its own stage, even an odd one.
	for _, tc := range []struct {
		name   string
		pm     *ProcessMesh
		global *ProcessMesh
	}{
		{"nil global", world(), nil},
		{"no pp dim", world(), m24()},
		{"empty mesh, no pp", &ProcessMesh{Name: "e"}, m24()},
	} {
		got, err := tc.pm.PipelineStage(tc.global)
		if err != nil || got != tc.pm {
			t.Errorf("%s: PipelineStage = %v, %v; want the receiver itself", tc.name, got, err)
		}
	}

	for _, tc := range []struct {
		name   string
		pm     *ProcessMesh
		global *ProcessMesh
		want   string
	}{
		{"not in any stage", mesh("sub", []int{1}, []string{"x"}, []int{9}), global,
			"mesh sub: no pp stage of mesh world contains its first rank 9"},
		{"no processes", &ProcessMesh{Name: "sub"}, global,
			"mesh sub: no processes, so no pipeline stage in mesh world"},
		{"nil mesh", nil, global, "nil mesh"},
		{"malformed global", mesh("sub", []int{1}, []string{"x"}, []int{0}),
			mesh("g", []int{2, 2}, []string{"pp", "dp"}, []int{0, 1, 2}),
			"mesh g: shape [2, 2] holds 4 processes but 3 ranks are given"},
		{"pp name without size", mesh("sub", []int{1}, []string{"x"}, []int{0}),
			mesh("g", []int{2}, []string{"dp", "pp"}, []int{0, 1}),
			"mesh g: 2 dim names for 1 dims"},
	} {
		_, err := tc.pm.PipelineStage(tc.global)
		checkErr(t, tc.name, err, tc.want)
	}
}

func TestProcessMeshValidate(t *testing.T) {
	for _, pm := range []*ProcessMesh{world(), m24(), m234(), odd(), mesh("x", []int{1}, []string{"a"}, []int{0})} {
		if err := pm.Validate(); err != nil {
			t.Errorf("%v: Validate() = %v", pm, err)
		}
	}
	for _, tc := range []struct {
		name string
		pm   *ProcessMesh
		want string
	}{
		{"nil", nil, "nil mesh"},
		{"empty", &ProcessMesh{}, `mesh "": empty shape`},
		{"0-D", mesh("one", []int{}, []string{}, []int{7}), "mesh one: empty shape"},
		{"zero size", mesh("m", []int{2, 0}, []string{"a", "b"}, nil), "mesh m: dim 1 has size 0; sizes must be positive"},
		{"negative sizes", mesh("m", []int{-1, 2, -3}, []string{"a", "b", "c"}, nil),
			"mesh m: dim 0 has size -1; sizes must be positive\nmesh m: dim 2 has size -3; sizes must be positive"},
		{"too few ranks", mesh("m", []int{2, 2}, []string{"a", "b"}, []int{0, 1, 2}),
			"mesh m: shape [2, 2] holds 4 processes but 3 ranks are given"},
		{"too many ranks", mesh("m", []int{2}, []string{"a"}, []int{0, 1, 2}),
			"mesh m: shape [2] holds 2 processes but 3 ranks are given"},
		{"overflow", mesh("m", []int{1 << 40, 1 << 40}, []string{"a", "b"}, []int{0}),
			"mesh m: shape [1099511627776, 1099511627776] holds more processes than an int can count"},
		{"overflow at max", mesh("m", []int{math.MaxInt, 2}, []string{"a", "b"}, []int{0}),
			"mesh m: shape [9223372036854775807, 2] holds more processes than an int can count"},
		{"too few names", mesh("m", []int{2, 2}, []string{"a"}, []int{0, 1, 2, 3}), "mesh m: 1 dim names for 2 dims"},
		{"too many names", mesh("m", []int{4}, []string{"a", "b"}, []int{0, 1, 2, 3}), "mesh m: 2 dim names for 1 dims"},
		{"empty name", mesh("m", []int{2, 2}, []string{"a", ""}, []int{0, 1, 2, 3}), "mesh m: dim 1 has an empty name"},
		{"duplicate name", mesh("m", []int{1, 2, 2}, []string{"a", "b", "a"}, []int{0, 1, 2, 3}),
			"mesh m: dims 0 and 2 are both named a"},
		{"negative rank", mesh("m", []int{2}, []string{"a"}, []int{0, -4}), "mesh m: rank -4 is negative"},
		{"duplicate ranks", mesh("m", []int{4}, []string{"a"}, []int{3, 1, 3, 3}), "mesh m: rank 3 appears 3 times"},
		{"quoted name", mesh("my mesh", []int{2}, []string{"a"}, []int{1, 1}), `mesh "my mesh": rank 1 appears 2 times`},
		{"everything", mesh("m", []int{3, 0}, []string{"", "x", "x"}, []int{-1, -1, 2}),
			"mesh m: dim 1 has size 0; sizes must be positive\n" +
				"mesh m: 3 dim names for 2 dims\n" +
				"mesh m: dim 0 has an empty name\n" +
				"mesh m: dims 1 and 2 are both named x\n" +
				"mesh m: rank -1 is negative\n" +
				"mesh m: rank -1 appears 2 times"},
	} {
		checkErr(t, tc.name, tc.pm.Validate(), tc.want)
	}
}

func TestProcessMeshString(t *testing.T) {
	for _, tc := range []struct {
		pm   *ProcessMesh
		want string
	}{
		{world(), "world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]"},
		{odd(), "odd shape [2, 3] dims [x, y] ranks [2, 4, 5, 0, 1, 3]"},
		{mesh("my mesh", []int{1}, []string{"a b"}, []int{0}), `"my mesh" shape [1] dims ["a b"] ranks [0]`},
		{&ProcessMesh{}, `"" shape [] dims [] ranks []`},
		{nil, "<nil>"},
	} {
		if got := tc.pm.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// TestProcessMeshAllocs pins the cost of the lookups later passes run per
// op and per rank.
func TestProcessMeshAllocs(t *testing.T) {
	pm := m234()
	for _, tc := range []struct {
		name string
		want float64
		f    func()
	}{
		{"Coord", 1, func() { _, _ = pm.Coord(17) }},
		{"Group", 1, func() { _, _ = pm.Group(1, 17) }},
		{"RankAt", 0, func() { _, _ = pm.RankAt([]int{1, 1, 1}) }},
		{"Contains", 0, func() { _ = pm.Contains(17) }},
	} {
		if got := testing.AllocsPerRun(100, tc.f); got != tc.want {
			t.Errorf("%s: %v allocations per call, want %v", tc.name, got, tc.want)
		}
	}
}

// randomMesh returns a valid mesh of 1 to 4 dims, sizes 1 to 4, whose ids
// are distinct, not contiguous, and in random order.
func randomMesh(r *rand.Rand) *ProcessMesh {
	nd := 1 + r.IntN(4)
	shape := make([]int, nd)
	dims := make([]string, nd)
	n := 1
	for i := range shape {
		shape[i] = 1 + r.IntN(4)
		dims[i] = string(rune('a' + i))
		n *= shape[i]
	}
	return mesh("rand", shape, dims, r.Perm(2 * n)[:n])
}

func TestProcessMeshProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		pm := randomMesh(r)
		if err := pm.Validate(); err != nil {
			t.Fatalf("random mesh invalid: %v", err)
		}
		for _, rank := range pm.ProcessIDs {
			c, err := pm.Coord(rank)
			if err != nil {
				t.Fatalf("%v: Coord(%d): %v", pm, rank, err)
			}
			if back, err := pm.RankAt(c); err != nil || back != rank {
				t.Errorf("%v: RankAt(Coord(%d) = %v) = %d, %v", pm, rank, c, back, err)
			}
			for axis := range pm.NDim() {
				g, err := pm.Group(axis, rank)
				if err != nil {
					t.Fatalf("%v: Group(%d, %d): %v", pm, axis, rank, err)
				}
				if len(g) != pm.Shape[axis] || !slices.Contains(g, rank) || !slices.IsSorted(g) {
					t.Errorf("%v: Group(%d, %d) = %v", pm, axis, rank, g)
				}
				for _, other := range g {
					oc, _ := pm.Coord(other)
					for d := range c {
						if d != axis && oc[d] != c[d] {
							t.Errorf("%v: Group(%d, %d) holds %d at %v, off %v", pm, axis, rank, other, oc, c)
						}
					}
				}
			}
		}
		for axis := range pm.NDim() {
			gs := pm.Groups(axis)
			if len(gs) != pm.Size()/pm.Shape[axis] {
				t.Errorf("%v: Groups(%d) has %d groups", pm, axis, len(gs))
			}
			seen := map[int]int{}
			for _, g := range gs {
				if want, _ := pm.Group(axis, g[0]); !slices.Equal(g, want) {
					t.Errorf("%v: Groups(%d) has %v, but Group(%d, %d) = %v", pm, axis, g, axis, g[0], want)
				}
				for _, rank := range g {
					seen[rank]++
				}
			}
			checkPartition(t, pm, "Groups", seen)
		}
		for dim := range pm.NDim() {
			seen := map[int]int{}
			for index := range pm.Shape[dim] {
				sub, err := pm.SubMesh(dim, index)
				if err != nil {
					t.Fatalf("%v: SubMesh(%d, %d): %v", pm, dim, index, err)
				}
				if sub.NDim() != pm.NDim()-1 || sub.Size() != pm.Size()/pm.Shape[dim] {
					t.Errorf("%v: SubMesh(%d, %d) = %v", pm, dim, index, sub)
				}
				if sub.NDim() > 0 {
					if err := sub.Validate(); err != nil {
						t.Errorf("%v: SubMesh(%d, %d) invalid: %v", pm, dim, index, err)
					}
				}
				for _, rank := range sub.ProcessIDs {
					seen[rank]++
					c, _ := pm.Coord(rank)
					sc, err := sub.Coord(rank)
					if err != nil || c[dim] != index || !slices.Equal(sc, slices.Delete(slices.Clone(c), dim, dim+1)) {
						t.Errorf("%v: SubMesh(%d, %d) puts %d at %v, %v", pm, dim, index, rank, sc, err)
					}
				}
			}
			checkPartition(t, pm, "SubMesh", seen)
		}
	}
}

func checkPartition(t *testing.T, pm *ProcessMesh, what string, seen map[int]int) {
	t.Helper()
	if len(seen) != pm.Size() {
		t.Errorf("%v: %s covers %d of %d ranks", pm, what, len(seen), pm.Size())
	}
	for rank, n := range seen {
		if n != 1 || !pm.Contains(rank) {
			t.Errorf("%v: %s holds rank %d %d times", pm, what, rank, n)
		}
	}
}

// TestValidateLimits: a mesh of more than MaxMeshRanks processes, or with
// a rank above MaxRank, is refused, though every rank is listed.
func TestValidateLimits(t *testing.T) {
	n := MaxMeshRanks + 1
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	big := &ProcessMesh{Name: "big", Shape: []int{n}, DimNames: []string{"x"}, ProcessIDs: ids}
	if err := big.Validate(); err == nil || err.Error() != "mesh big: shape [1048577] holds 1048577 processes, more than ir.MaxMeshRanks (1048576)" {
		t.Errorf("Validate: %v", err)
	}
	big.Shape[0], big.ProcessIDs = MaxMeshRanks, ids[:MaxMeshRanks]
	if err := big.Validate(); err != nil {
		t.Errorf("a mesh of MaxMeshRanks: %v", err)
	}
	far := &ProcessMesh{Name: "far", Shape: []int{2}, DimNames: []string{"x"}, ProcessIDs: []int{0, MaxRank + 1}}
	if err := far.Validate(); err == nil || err.Error() != "mesh far: rank 2147483648 is above ir.MaxRank (2147483647)" {
		t.Errorf("Validate: %v", err)
	}
}
