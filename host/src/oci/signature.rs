//! Signatures of plugin artifacts, in the format cosign stores beside an artifact.
