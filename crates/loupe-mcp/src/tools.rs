//! The tool surface as MCP sees it (§4): names, descriptions, input and output schemas and
//! annotations, all generated from the engine's parameter table (`loupe_engine::params`), so
//! the schema a client sees and the parser that reads its call cannot drift. Every token of
//! `tools/list` sits in every agent's context: the whole surface stays under 3,000 tokens.

use std::sync::Arc;

use loupe_core::config::LegacyTools;
use loupe_engine::legacy::{LEGACY_TOOLS, LegacyTool};
use loupe_engine::params::{self, Effects, Param, ParamType, ToolSpec};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

/// The tools `tools/list` returns, in order, generated from the engine's parameter table.
pub fn tools() -> Vec<Tool> {
    params::TOOLS.iter().map(|spec| tool(spec, false)).collect()
}

/// The tools a read-only server can run (§4): `edit` left out, and `manage`, whose writes
/// (undo, redo) it refuses, annotated read-only, so clients need not ask before a status call.
fn read_only_tools() -> Vec<Tool> {
    params::TOOLS.iter().filter(|spec| spec.name != "edit").map(|spec| tool(spec, true)).collect()
}

/// `tools/list` under a `legacy_tools` setting (§12) and `read_only` (§4): the five tools (four
/// when read-only), then, when `listed`, the legacy names marked deprecated. The listed names may take the list over the §4 budget; the
/// default list never holds them (hidden ones are callable, disabled ones answer
/// `LEGACY_TOOL_DISABLED`).
pub fn tools_for(legacy: LegacyTools, read_only: bool) -> Vec<Tool> {
    let mut listed = if read_only { read_only_tools() } else { tools() };
    if legacy == LegacyTools::Listed {
        listed.extend(LEGACY_TOOLS.iter().filter(|legacy| !(read_only && legacy.tool == "edit")).map(legacy_tool));
    }
    listed
}

/// A legacy name as `tools/list` shows it in listed mode: its old parameters, the replacement's
/// annotations and output schema, `deprecated` in its title, description and `_meta`.
fn legacy_tool(legacy: &LegacyTool) -> Tool {
    let Some(spec) = params::tool(legacy.tool) else { unreachable!("a legacy name routes to one of the five tools") };
    let implied: Vec<String> = legacy.fixed.iter().map(|(key, value)| format!("{key}={value}")).collect();
    let replacement =
        if implied.is_empty() { legacy.tool.to_owned() } else { format!("{} ({})", legacy.tool, implied.join(", ")) };
    let description = format!(
        "Deprecated: use `{replacement}`. {} Answers carry LEGACY_TOOL_DEPRECATED; `{}` parameters are accepted too.",
        legacy.description, legacy.tool
    );
    let title = format!("{} (deprecated)", legacy.name);
    let Effects { read_only, destructive, idempotent } = spec.effects;
    let mut meta = JsonObject::new();
    meta.insert("deprecated".into(), Value::Bool(true));
    meta.insert("replacement".into(), Value::from(legacy.tool));
    let mut tool = Tool::new(legacy.name, description, object(input_schema(legacy.params)))
        .with_title(title.clone())
        .with_raw_output_schema(object(output_schema(legacy.tool)))
        .with_annotations(
            ToolAnnotations::with_title(title)
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(idempotent)
                .open_world(false),
        );
    tool.meta = Some(rmcp::model::MetaObject(meta));
    tool
}

fn tool(spec: &ToolSpec, server_read_only: bool) -> Tool {
    let Effects { read_only, destructive, idempotent } = spec.effects;
    let (read_only, destructive) = if server_read_only { (true, false) } else { (read_only, destructive) };
    Tool::new(spec.name, spec.description, object(input_schema(spec.params)))
        .with_title(spec.title)
        .with_raw_output_schema(object(output_schema(spec.name)))
        .with_annotations(
            ToolAnnotations::with_title(spec.title)
                .read_only(read_only)
                .destructive(destructive)
                .idempotent(idempotent)
                .open_world(false),
        )
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The `inputSchema` of a parameter list: one property per canonical name (aliases are
/// accepted but not listed, to keep `tools/list` small), the required ones named.
pub(crate) fn input_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    for param in params.iter().filter(|param| param.listed) {
        properties.insert(param.name.to_owned(), property(param));
    }
    let required: Vec<&str> = params.iter().filter(|param| param.required).map(|param| param.name).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn property(param: &Param) -> Value {
    let mut schema = match param.ty {
        ParamType::String => json!({"type": "string"}),
        // 0 and 1, the usual floors, go unsaid (an answer below them is INVALID_ARGS, naming it).
        ParamType::Integer { min, max } => {
            let mut schema = json!({"type": "integer"});
            if min > 1 {
                schema["minimum"] = Value::from(min);
            }
            if let Some(max) = max {
                schema["maximum"] = Value::from(max);
            }
            schema
        }
        ParamType::Boolean => json!({"type": "boolean"}),
        ParamType::Choice(choices) => json!({"type": "string", "enum": choices}),
        ParamType::StringList => json!({"type": "array", "items": {"type": "string"}}),
        ParamType::EditList(items) => json!({"type": "array", "minItems": 1, "items": input_schema(items)}),
    };
    // A parameter that belongs to some modes says which, so a model need not guess.
    let description = match param.only_for {
        [] => param.description.to_owned(),
        modes => format!("{}: {}", mode_list(modes), param.description),
    };
    schema["description"] = Value::from(description);
    schema
}

/// The modes a parameter is for, as its description names them: the symbol operations share a
/// suffix, written once (`*_symbol`, `insert_*_symbol`).
fn mode_list(modes: &[&str]) -> String {
    let (symbol, other): (Vec<&str>, Vec<&str>) = modes.iter().partition(|mode| mode.ends_with("_symbol"));
    let mut listed: Vec<String> = other.iter().map(|mode| (*mode).to_owned()).collect();
    match symbol.as_slice() {
        [] => {}
        [one] => listed.push((*one).to_owned()),
        many => {
            let first = many[0];
            let common = many.iter().fold(first.len(), |length, mode| {
                first.bytes().zip(mode.bytes()).take(length).take_while(|(a, b)| a == b).count()
            });
            let prefix = &first[..first[..common].rfind('_').map_or(0, |at| at + 1)];
            listed.push(format!("{prefix}*_symbol"));
        }
    }
    listed.join("/")
}

/// A tool's `outputSchema` (§3.3), made from the engine's table of the fields its compact
/// `structuredContent` may carry (`loupe_engine::STRUCTURED_FIELDS`): `ok` and `text` always,
/// the rest when the answer has them; `metadata: "full"` adds `meta`, `content` and `location`.
fn output_schema(tool: &str) -> Value {
    let mut properties = Map::new();
    for field in
        loupe_engine::STRUCTURED_FIELDS.iter().filter(|field| field.tools.is_empty() || field.tools.contains(&tool))
    {
        let mut property = json!({"type": field.json_type});
        if let Some(description) = field.description {
            property["description"] = Value::from(description);
        }
        properties.insert(field.name.to_owned(), property);
    }
    json!({"type": "object", "properties": properties, "required": ["ok", "text"]})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §4: the whole surface stays under 2,450 tokens as sent (compact JSON), which is under
    /// 3,000 for a client that re-serializes it with spaces (`json.dumps`' `", "` and `": "`).
    #[test]
    fn tools_list_stays_under_its_token_budget() {
        let listed = serde_json::to_value(tools()).unwrap();
        let compact = serde_json::to_string(&listed).unwrap();
        let tokens = loupe_core::tokens::count(&compact);
        let spaced = compact.replace("\",\"", "\", \"").replace("\":", "\": ");
        let spaced_tokens = loupe_core::tokens::count(&spaced);
        eprintln!("tools/list: {tokens} tokens ({spaced_tokens} spaced), {} bytes", compact.len());
        assert!(tokens < 2450, "tools/list costs {tokens} tokens");
        assert!(spaced_tokens < 3000, "tools/list re-serialized with spaces costs {spaced_tokens} tokens");
    }

    /// §12: the default list (hidden) and a disabled one hold the five tools only; listed mode
    /// adds every legacy name, marked deprecated, with its old parameters.
    #[test]
    fn only_listed_mode_lists_the_legacy_names_marked_deprecated() {
        let json = |tools: Vec<Tool>| serde_json::to_value(tools).unwrap();
        assert_eq!(json(tools_for(LegacyTools::Hidden, false)), json(tools()));
        assert_eq!(json(tools_for(LegacyTools::Disabled, false)), json(tools()));
        let listed = tools_for(LegacyTools::Listed, false);
        let names: Vec<&str> = listed.iter().map(|tool| tool.name.as_ref()).collect();
        let legacy: Vec<&str> = LEGACY_TOOLS.iter().map(|legacy| legacy.name).collect();
        assert_eq!(names[..5], params::tool_names()[..]);
        assert_eq!(names[5..], legacy[..]);
        for (tool, legacy) in listed[5..].iter().zip(LEGACY_TOOLS) {
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(description.starts_with(&format!("Deprecated: use `{}", legacy.tool)), "{description}");
            assert_eq!(tool.title.as_deref(), Some(format!("{} (deprecated)", legacy.name).as_str()));
            let meta = &tool.meta.as_ref().unwrap().0;
            assert_eq!(meta["deprecated"], Value::Bool(true));
            assert_eq!(meta["replacement"], Value::from(legacy.tool));
            let properties = tool.input_schema["properties"].as_object().unwrap();
            let old: Vec<&str> = legacy.params.iter().map(|param| param.name).collect();
            assert_eq!(properties.keys().map(String::as_str).collect::<Vec<_>>().len(), old.len());
            assert!(old.iter().all(|name| properties.contains_key(*name)), "{}: {properties:?}", legacy.name);
        }
        let edit_code = &listed[5 + LEGACY_TOOLS.iter().position(|legacy| legacy.name == "edit_code").unwrap()];
        let item = &edit_code.input_schema["properties"]["edits"]["items"]["properties"];
        assert!(item["targetString"].is_object() && item["filePath"].is_object(), "{item}");
        let tokens = loupe_core::tokens::count(&serde_json::to_string(&listed).unwrap());
        eprintln!("tools/list with the legacy names listed: {tokens} tokens");
    }

    /// §4: a read-only server lists the tools it can run: no `edit` (nor its legacy names), and
    /// `manage` read-only; the others as a writing server lists them.
    #[test]
    fn a_read_only_server_lists_what_it_can_run() {
        let names = |tools: &[Tool]| tools.iter().map(|tool| tool.name.to_string()).collect::<Vec<_>>();
        let read_only = tools_for(LegacyTools::Hidden, true);
        assert_eq!(names(&read_only), ["read", "search", "analyze", "manage"]);
        let manage = read_only.iter().find(|tool| tool.name == "manage").unwrap().annotations.clone().unwrap();
        assert_eq!((manage.read_only_hint, manage.destructive_hint), (Some(true), Some(false)));
        let writing = tools();
        let manage = writing.iter().find(|tool| tool.name == "manage").unwrap().annotations.clone().unwrap();
        assert_eq!((manage.read_only_hint, manage.destructive_hint), (Some(false), Some(false)));
        for tool in &read_only[..3] {
            let same = writing.iter().find(|other| other.name == tool.name).unwrap();
            assert_eq!(serde_json::to_value(tool).unwrap(), serde_json::to_value(same).unwrap());
        }
        let listed = names(&tools_for(LegacyTools::Listed, true));
        assert!(!listed.iter().any(|name| name == "edit" || name == "edit_code"), "{listed:?}");
    }

    #[test]
    fn every_tool_is_annotated_and_declares_its_output() {
        for tool in tools_for(LegacyTools::Listed, false) {
            let annotations = tool.annotations.as_ref().unwrap();
            assert!(annotations.read_only_hint.is_some() && annotations.destructive_hint.is_some());
            assert!(annotations.idempotent_hint.is_some());
            assert_eq!(annotations.open_world_hint, Some(false));
            assert!(tool.output_schema.is_some());
        }
    }
}
