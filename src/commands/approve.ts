import { decisionCommand } from "./_approval.ts";

export default decisionCommand("approve");
