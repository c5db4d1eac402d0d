// Placeholder until room-sim lands.
int main() { return 2; }
