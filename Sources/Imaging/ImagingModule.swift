/// Placeholder until the Imaging layer lands.
public enum ImagingModule {}
