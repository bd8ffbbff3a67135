package passes

// PartitionStepNames lists the steps of the partition pipeline in order,
// for the external tests.
func PartitionStepNames() []string {
	var names []string
	for _, s := range partitionSteps(nil) {
		names = append(names, s.pass.Name)
	}
	return names
}
