"""ttanjit: a real-time card-game service (One Card, 줄줄이 벌점, Hakka Cards)."""

__version__ = "0.1.0"
