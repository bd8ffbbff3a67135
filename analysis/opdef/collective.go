package opdef

func collectiveDefs() []*Def {
	return nil // TODO(defs)
}
