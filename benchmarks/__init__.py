"""Benchmarks of the workbook: speed as ratios against a baseline measured in the same run."""
