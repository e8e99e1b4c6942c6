package agent

// TEMPORARY on the agent branch until outline's repo map lands.
type noRepoMap struct{}

func (noRepoMap) Render(int) (string, error) { return "", nil }
func (noRepoMap) Touch(string)               {}

var newRepoMap = func(root string) repoMapper { return noRepoMap{} }
