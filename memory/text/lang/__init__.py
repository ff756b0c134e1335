"""The word tables of each language the text layer reads: one module per language, data only."""
