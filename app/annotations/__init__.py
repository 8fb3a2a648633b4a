"""Annotations: markers (deploys, incidents, …) on the charts of the datasets they name."""
