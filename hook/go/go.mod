module roomoutbox

go 1.19
