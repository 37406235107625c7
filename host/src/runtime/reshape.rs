//! A component as the sandbox compiles it: its exports lifted without their post-return
//! functions.
//!
//! A post-return function gives back what the guest allocated for a call's results, so that
//! the same instance can take the next call. Here an instance takes one call (two at most,
//! see [`super::CallState::arm_again`]) and its memory is reset when the store is dropped, so
//! the guest's cleanup would free blocks in memory about to be thrown away. Keeping it is not
//! free: wasmtime resolves every lifted export's post-return function when it instantiates,
//! whether or not that export is called (BENCHMARKS.md, "Issue 52: exports lifted without
//! their cleanup"). Only the top-level canonical sections change; every other section, the
//! core modules' code included, is copied byte for byte.

use std::borrow::Cow;

use wasm_encoder::reencode::{ReencodeComponent as _, RoundtripReencoder, component_utils};
use wasm_encoder::{CanonicalFunctionSection, Component, RawSection};
use wasmparser::{CanonicalFunction, CanonicalOption, Chunk, Parser, Payload};

/// What [`for_one_call`] does to a component, as a number: an artifact compiled from its
/// output is named with it, so a change here compiles every plugin again once.
pub const VERSION: u32 = 1;

/// `bytes` with no lifted export's post-return function, or `bytes` as they are when there is
/// none to take out or they are not a component wasmparser can read (compiling them then
/// says what is wrong, in wasmtime's words).
pub fn for_one_call(bytes: &[u8]) -> Cow<'_, [u8]> {
    match without_post_returns(bytes) {
        Ok(Some(reshaped)) => Cow::Owned(reshaped),
        Ok(None) | Err(_) => Cow::Borrowed(bytes),
    }
}

/// The component's top-level sections with each lift's post-return option left out; `None`
/// when no lift has one.
fn without_post_returns(bytes: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
    let mut parser = Parser::new(0);
    let mut remaining = bytes;
    let mut component = Component::new();
    let mut taken_out = 0;
    while !remaining.is_empty() {
        let Chunk::Parsed { consumed, payload } = parser.parse(remaining, true)? else {
            anyhow::bail!("the component ends before its last section");
        };
        remaining = &remaining[consumed..];
        match payload {
            Payload::Version { encoding: wasmparser::Encoding::Component, .. } => {}
            Payload::Version { .. } => return Ok(None),
            Payload::ComponentCanonicalSection(reader) => {
                let mut section = CanonicalFunctionSection::new();
                for function in reader {
                    taken_out += lift_without_post_return(&mut section, function?)?;
                }
                component.section(&section);
            }
            Payload::End(_) => {}
            other => {
                // A nested module or component is handed over whole: skip past its bytes,
                // which the parser would otherwise walk into. Its length is the section
                // header's word, unchecked: a file cut short ends inside it.
                if let Payload::ModuleSection { unchecked_range, .. }
                | Payload::ComponentSection { unchecked_range, .. } = &other
                {
                    let Some(after) = remaining.get(unchecked_range.len()..) else {
                        anyhow::bail!("the component ends inside a nested module or component");
                    };
                    remaining = after;
                }
                let Some((id, range)) = other.as_section() else {
                    anyhow::bail!("a section wasmparser cannot place");
                };
                let Some(data) = bytes.get(range) else {
                    anyhow::bail!("the component ends inside a section");
                };
                component.section(&RawSection { id, data });
            }
        }
    }
    Ok((taken_out > 0).then(|| component.finish()))
}

/// Writes `function` into `section`, a lift without its post-return option; how many options
/// were left out (0 or 1).
fn lift_without_post_return(
    section: &mut CanonicalFunctionSection,
    function: CanonicalFunction,
) -> anyhow::Result<usize> {
    let CanonicalFunction::Lift { core_func_index, type_index, options } = &function else {
        component_utils::parse_component_canonical(&mut RoundtripReencoder, section, function)?;
        return Ok(0);
    };
    let kept: Vec<_> = options
        .iter()
        .filter(|option| !matches!(option, CanonicalOption::PostReturn(_)))
        .map(|option| RoundtripReencoder.canonical_option(*option))
        .collect::<Result<_, _>>()?;
    let taken_out = options.len() - kept.len();
    section.lift(*core_func_index, *type_index, kept);
    Ok(taken_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        CodeSection, ComponentBuilder, ComponentExportKind, ComponentValType, ConstExpr, DataSection,
        ExportKind, ExportSection, Function, FunctionSection, GlobalSection, GlobalType, MemArg,
        MemorySection, MemoryType, Module, PrimitiveValType, TypeSection, ValType,
    };

    const NO_PARAMS: [(&str, ComponentValType); 0] = [];

    /// A component exporting `f: func() -> string` (lifted with a post-return that sets a
    /// flag in the instance) and `cleaned: func() -> u32`, which reads the flag.
    fn component_with_a_post_return() -> Vec<u8> {
        let mut types = TypeSection::new();
        types.ty().function([], [ValType::I32]);
        types.ty().function([ValType::I32; 4], [ValType::I32]);
        types.ty().function([ValType::I32], []);
        let mut functions = FunctionSection::new();
        for ty in [0, 1, 2, 0] {
            functions.function(ty);
        }
        let mut memories = MemorySection::new();
        memories.memory(MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        let mut globals = GlobalSection::new();
        globals.global(
            GlobalType { val_type: ValType::I32, mutable: true, shared: false },
            &ConstExpr::i32_const(0),
        );
        let mut exports = ExportSection::new();
        for (name, kind, index) in [
            ("memory", ExportKind::Memory, 0),
            ("f", ExportKind::Func, 0),
            ("cabi_realloc", ExportKind::Func, 1),
            ("cabi_post_f", ExportKind::Func, 2),
            ("cleaned", ExportKind::Func, 3),
        ] {
            exports.export(name, kind, index);
        }
        let word = |offset| MemArg { offset, align: 2, memory_index: 0 };
        let mut code = CodeSection::new();
        let mut f = Function::new([]);
        // The string "hello" at 16, its pointer and length at 8.
        f.instructions().i32_const(8).i32_const(16).i32_store(word(0));
        f.instructions().i32_const(8).i32_const(5).i32_store(word(4));
        f.instructions().i32_const(8).end();
        code.function(&f);
        let mut realloc = Function::new([]);
        realloc.instructions().i32_const(64).end();
        code.function(&realloc);
        let mut post_return = Function::new([]);
        post_return.instructions().i32_const(1).global_set(0).end();
        code.function(&post_return);
        let mut cleaned = Function::new([]);
        cleaned.instructions().global_get(0).end();
        code.function(&cleaned);
        let mut data = DataSection::new();
        data.active(0, &ConstExpr::i32_const(16), b"hello".iter().copied());
        let mut module = Module::new();
        module
            .section(&types)
            .section(&functions)
            .section(&memories)
            .section(&globals)
            .section(&exports)
            .section(&code)
            .section(&data);

        let mut component = ComponentBuilder::default();
        let module = component.core_module(None, &module);
        let instance = component.core_instantiate(None, module, []);
        let core = |component: &mut ComponentBuilder, name, kind| {
            component.core_alias_export(None, instance, name, kind)
        };
        let (f, memory) =
            (core(&mut component, "f", ExportKind::Func), core(&mut component, "memory", ExportKind::Memory));
        let realloc = core(&mut component, "cabi_realloc", ExportKind::Func);
        let post_return = core(&mut component, "cabi_post_f", ExportKind::Func);
        let cleaned = core(&mut component, "cleaned", ExportKind::Func);
        let (returns_string, mut ty) = component.type_function(None);
        ty.params(NO_PARAMS).result(Some(ComponentValType::Primitive(PrimitiveValType::String)));
        let (returns_u32, mut ty) = component.type_function(None);
        ty.params(NO_PARAMS).result(Some(ComponentValType::Primitive(PrimitiveValType::U32)));
        let options = [
            wasm_encoder::CanonicalOption::Memory(memory),
            wasm_encoder::CanonicalOption::Realloc(realloc),
            wasm_encoder::CanonicalOption::PostReturn(post_return),
        ];
        let f = component.lift_func(None, f, returns_string, options);
        let cleaned = component.lift_func(None, cleaned, returns_u32, []);
        component.export("f", ComponentExportKind::Func, f, None);
        component.export("cleaned", ComponentExportKind::Func, cleaned, None);
        component.finish()
    }

    fn post_returns(bytes: &[u8]) -> usize {
        let mut count = 0;
        for payload in Parser::new(0).parse_all(bytes) {
            if let Payload::ComponentCanonicalSection(reader) = payload.unwrap() {
                for function in reader {
                    if let CanonicalFunction::Lift { options, .. } = function.unwrap() {
                        count +=
                            options.iter().filter(|o| matches!(o, CanonicalOption::PostReturn(_))).count();
                    }
                }
            }
        }
        count
    }

    /// What `f` returns, and whether the instance was cleaned up after it: `cleaned` asked in
    /// the same instance.
    fn call(bytes: &[u8]) -> (String, u32) {
        let engine = wasmtime::Engine::default();
        let linker = wasmtime::component::Linker::<()>::new(&engine);
        let component = wasmtime::component::Component::new(&engine, bytes).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = linker.instantiate(&mut store, &component).unwrap();
        let f = instance.get_typed_func::<(), (String,)>(&mut store, "f").unwrap();
        let (said,) = f.call(&mut store, ()).unwrap();
        let cleaned = instance.get_typed_func::<(), (u32,)>(&mut store, "cleaned").unwrap();
        let (flag,) = cleaned.call(&mut store, ()).unwrap();
        (said, flag)
    }

    #[test]
    fn a_lift_loses_its_post_return_and_returns_what_it_returned() {
        let original = component_with_a_post_return();
        assert_eq!(post_returns(&original), 1);
        assert_eq!(call(&original), ("hello".to_owned(), 1), "the original cleans up");

        let reshaped = for_one_call(&original);
        assert_eq!(post_returns(&reshaped), 0);
        wasmparser::Validator::new().validate_all(&reshaped).expect("still a valid component");
        assert_eq!(call(&reshaped), ("hello".to_owned(), 0), "the same answer, no clean-up");
        assert_eq!(reshaped.len(), original.len() - 2, "only the option's two bytes are gone");
    }

    #[test]
    fn a_component_without_post_returns_and_bytes_that_are_no_component_stay_as_they_are() {
        let original = component_with_a_post_return();
        let reshaped = for_one_call(&original).into_owned();
        assert!(matches!(for_one_call(&reshaped), Cow::Borrowed(_)), "nothing left to take out");
        let mut module = Module::new();
        module.section(&TypeSection::new());
        assert!(matches!(for_one_call(&module.finish()), Cow::Borrowed(_)), "a core module");
        assert!(matches!(for_one_call(b"not wasm"), Cow::Borrowed(_)));
        for cut in [original.len() - 3, original.len() / 2, 20] {
            assert!(matches!(for_one_call(&original[..cut]), Cow::Borrowed(_)), "cut short at {cut}");
        }
    }
}
