// Checks Kubernetes manifests against Kubernetes 1.36's OpenAPI schema, offline, with two packages
// generated from that schema (versions pinned in package.json and package-lock.json beside this file):
//   kubernetes-models 5.1.0 (Kubernetes v1.36.0): each object's validate(): types, required fields,
//     enums, formats (int32, quantities, int-or-string);
//   @kubernetes/client-node 2.0.1 (OpenAPI release-1.36): each type's property names, so a field the
//     schema does not define (a misspelling) is refused, as kubectl's strict field validation does;
//     ajv checks the objects against a schema made of those names with additionalProperties false.
// kubeflow.org/v2beta1 MPIJob is a custom resource, not in Kubernetes' schema: each of its
// mpiReplicaSpecs' pod templates is checked as a core/v1 PodTemplateSpec; the MPIJob's own fields are
// not (tests/e2e/k8s_manifests.py checks the ones gpuscale relies on).
//
//   node check-manifests.mjs FILE.yaml...   one line per object checked or problem; exit 1 on any problem
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import { parseAllDocuments } from "yaml";
import * as clientModels from "@kubernetes/client-node/dist/gen/models/all.js";

export const KUBERNETES_VERSION = "1.36";

// The client's model name of an apiVersion and kind: V1CronJob for batch/v1 CronJob.
function modelName(apiVersion, kind) {
  const version = apiVersion.split("/").pop();
  return version.charAt(0).toUpperCase() + version.slice(1) + kind;
}

// One JSON Schema per client model: its properties by their JSON names, nothing else allowed. Leaf
// types are left to kubernetes-models (a quantity is a number or a string in YAML, a string here).
function strictSchema() {
  const definitions = {};
  const of = (type) => {
    let m;
    if ((m = /^Array<(.+)>$/.exec(type))) return { items: of(m[1]) };
    if ((m = /^\{ \[key: string\]: (.+); \}$/.exec(type))) return { additionalProperties: of(m[1]) };
    if (definitions[type] !== undefined || clientModels[type]?.attributeTypeMap) return { $ref: `#/definitions/${type}` };
    return {};
  };
  for (const [name, model] of Object.entries(clientModels)) {
    if (!Array.isArray(model?.attributeTypeMap)) continue;
    definitions[name] = {};
  }
  for (const name of Object.keys(definitions)) {
    const properties = {};
    for (const a of clientModels[name].attributeTypeMap) properties[a.baseName] = of(a.type);
    definitions[name] = { type: "object", properties, additionalProperties: false };
  }
  return { definitions };
}

const ajv = new Ajv({ allErrors: true, strict: false });
const strict = strictSchema();
ajv.addSchema(strict, "k8s");

function unknownFields(model, obj) {
  if (!strict.definitions[model]) return [`no type ${model} in the Kubernetes ${KUBERNETES_VERSION} schema`];
  const validate = ajv.getSchema(`k8s#/definitions/${model}`);
  if (validate(obj)) return [];
  return validate.errors.map((e) =>
    e.keyword === "additionalProperties"
      ? `${e.instancePath || "/"}: unknown field "${e.params.additionalProperty}"`
      : `${e.instancePath || "/"}: ${e.message}`);
}

// kubernetes-models' class of an apiVersion and kind, or null (the import path follows the group).
async function modelClass(apiVersion, kind) {
  const path = apiVersion.includes("/") ? apiVersion : `v1`;
  try {
    const mod = await import(`kubernetes-models/${path}/${kind}`);
    return mod[kind] ?? null;
  } catch {
    return null;
  }
}

function schemaErrors(Class, obj) {
  try {
    new Class(obj).validate();
    return [];
  } catch (e) {
    return (e.errors ?? [{ instancePath: "", message: e.message }]).map((x) => `${x.instancePath || "/"}: ${x.message}`);
  }
}

// Problems of one object: [] when it passes. `Class`, `model`: its kubernetes-models class and client
// model name.
function check(Class, model, obj) {
  return [...schemaErrors(Class, obj), ...unknownFields(model, obj)];
}

async function checkObject(obj) {
  const { apiVersion, kind } = obj ?? {};
  if (typeof apiVersion !== "string" || typeof kind !== "string") return { what: "?", problems: ["no apiVersion and kind"] };
  const what = `${apiVersion} ${kind} ${obj.metadata?.name ?? "(no name)"}`;
  if (apiVersion === "kubeflow.org/v2beta1" && kind === "MPIJob") {
    const Template = await modelClass("v1", "PodTemplateSpec");
    const problems = [];
    const specs = obj.spec?.mpiReplicaSpecs ?? {};
    if (Object.keys(specs).length === 0) problems.push("/spec/mpiReplicaSpecs: none");
    for (const [role, spec] of Object.entries(specs))
      for (const p of check(Template, "V1PodTemplateSpec", spec?.template))
        problems.push(`/spec/mpiReplicaSpecs/${role}/template${p.startsWith("/:") ? p.slice(1) : p}`);
    return { what: `${what} (its pod templates)`, problems };
  }
  const Class = await modelClass(apiVersion, kind);
  if (!Class) return { what, problems: [`no ${apiVersion} ${kind} in the Kubernetes ${KUBERNETES_VERSION} schema`] };
  return { what, problems: check(Class, modelName(apiVersion, kind), obj) };
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node check-manifests.mjs FILE.yaml...");
    return 2;
  }
  let bad = 0;
  for (const file of files) {
    let docs;
    try {
      docs = parseAllDocuments(readFileSync(file, "utf8"));
    } catch (e) {
      console.error(`${file}: cannot read: ${e.message}`);
      bad++;
      continue;
    }
    for (const doc of docs) {
      if (doc.errors.length) {
        console.error(`${file}: not YAML: ${doc.errors[0].message.split("\n")[0]}`);
        bad++;
        continue;
      }
      const obj = doc.toJS();
      if (obj === null) continue;
      const { what, problems } = await checkObject(obj);
      for (const p of problems) console.error(`${file}: ${what}: ${p}`);
      if (problems.length) bad++;
      else console.log(`${file}: ${what}: valid (Kubernetes ${KUBERNETES_VERSION})`);
    }
  }
  return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
