// Placeholder until the relay CLI lands.
int main() { return 2; }
