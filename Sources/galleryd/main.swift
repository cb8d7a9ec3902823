print("galleryd")
