/// Placeholder until the GalleryApp layer lands.
public enum GalleryAppModule {}
