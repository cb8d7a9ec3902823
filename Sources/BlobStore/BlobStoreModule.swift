/// Placeholder until the BlobStore layer lands.
public enum BlobStoreModule {}
