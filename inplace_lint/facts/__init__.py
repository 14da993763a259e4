"""Facts about one parsed file: names, torch op knowledge and per-function dataflow."""
