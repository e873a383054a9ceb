"""What the explorations say about the rules: wire decidability of every rule, the seeded bugs each
caught by its intended rule (mutants), and the readings matrix."""
