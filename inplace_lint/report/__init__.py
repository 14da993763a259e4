"""Ways to print findings."""
