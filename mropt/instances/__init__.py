"""Instance generators (paper defaults) and trace importers."""
