package opdef

func optimizerDefs() []*Def {
	return nil // TODO(defs)
}
