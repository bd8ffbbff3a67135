package ir

// SetSegmentsForTest sets the speculative parse to cut sources of at least
// minSource bytes into pieces of about size bytes, on two workers even on
// one core (minSource < 0 turns it off), and returns the undo.
func SetSegmentsForTest(minSource, size int) (restore func()) {
	oldMin, oldSize, oldWorkers := segmentMinSource, segmentSize, segmentWorkers
	if minSource < 0 {
		minSource = int(^uint(0) >> 1)
	}
	segmentMinSource, segmentSize = minSource, size
	segmentWorkers = func() int { return 2 }
	return func() { segmentMinSource, segmentSize, segmentWorkers = oldMin, oldSize, oldWorkers }
}

// SetPrintPiecesForTest prints blocks of at least minStatements statements
// in pieces of size statements on workers workers, and returns the undo.
func SetPrintPiecesForTest(minStatements, size, workers int) (restore func()) {
	oldMin, oldSize, oldWorkers := printPieceMin, printPieceSize, printWorkers
	printPieceMin, printPieceSize = minStatements, size
	printWorkers = func() int { return workers }
	return func() { printPieceMin, printPieceSize, printWorkers = oldMin, oldSize, oldWorkers }
}
