print("token-broker")
