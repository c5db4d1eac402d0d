# Functions the public headers declare and the library must define: every function or member
# function with a mangled name that is not defined in the header (no body, not inline, constexpr,
# defaulted, deleted or pure virtual), outside templates.
def walk_decls:
  if (.kind == "FunctionTemplateDecl" or .kind == "ClassTemplateDecl") then empty
  else ., ((.inner // [])[] | walk_decls) end;
walk_decls
| select(.kind == "FunctionDecl" or .kind == "CXXMethodDecl" or .kind == "CXXConstructorDecl"
         or .kind == "CXXDestructorDecl" or .kind == "CXXConversionDecl")
| select(.isImplicit != true and .inline != true and .constexpr != true and .pure != true
         and .explicitlyDefaulted == null and .explicitlyDeleted != true)
| select(((.inner // []) | map(select(.kind == "CompoundStmt")) | length) == 0)
| .mangledName
