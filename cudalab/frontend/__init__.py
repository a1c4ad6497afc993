"""Front-ends turn source into PTX text plus metadata; they never execute anything."""
