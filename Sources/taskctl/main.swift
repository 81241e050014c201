print("taskctl")
