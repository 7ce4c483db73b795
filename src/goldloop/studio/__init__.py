"""The Label Studio loop: offsets, the embedded server, the labeling config, push, pull and sync."""
