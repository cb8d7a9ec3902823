/// Placeholder until the Postgres layer lands.
public enum PostgresModule {}
