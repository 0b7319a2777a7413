"""Console rendering: reports, costs and calibration in rich tables."""
