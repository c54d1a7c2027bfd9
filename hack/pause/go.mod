module example.invalid/kruise-pause

go 1.26.0
