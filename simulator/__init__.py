"""The simulator: agent, client and transport composed, sans-IO."""
