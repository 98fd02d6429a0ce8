// Anchor for the shared precompiled header of every target that uses LibTorch.
