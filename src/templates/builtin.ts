import type { ChecklistItem, CorrectnessMode } from '../domain/checklist.js';

/** A named checklist: the items to ask for and defaults for the request's title, mode and due day. */
export interface Template {
  /** Kebab-case id, e.g. "individual-tax-return"; unique, compared case-insensitively. */
  name: string;
  /** The request's default title. */
  title: string;
  description: string;
  items: ChecklistItem[];
  correctnessMode?: CorrectnessMode;
  /** Default due day: this many days after the day the request is made. */
  dueInDays?: number;
  source: 'built-in' | 'file';
}

const file = (name: string, required = true): ChecklistItem => ({ name, required, type: 'file' });
const text = (name: string, required = true): ChecklistItem => ({ name, required, type: 'text' });
const date = (name: string, required = true): ChecklistItem => ({ name, required, type: 'date' });
const number = (name: string, required = true): ChecklistItem => ({ name, required, type: 'number' });
const yesNo = (name: string, required = true): ChecklistItem => ({ name, required, type: 'boolean' });

/** Starters every firm gets; a firm's templates file may override any of them by name. */
export const BUILTIN_TEMPLATES: readonly Template[] = [
  {
    name: 'individual-tax-return',
    title: 'Individual tax return documents',
    description: "What a preparer needs for a person's annual income tax return: income statements, deductions, prior return.",
    items: [
      file('Wage statements (W-2) from every employer'),
      file('1099 forms (interest, dividends, brokerage, freelance income)'),
      file("Last year's tax return", false),
      file('Mortgage interest statement (1098)', false),
      file('Charitable donation receipts', false),
      file('Childcare and education expense statements', false),
      file('Health insurance coverage forms (1095)', false),
      yesNo('Did your address, marital status or dependants change this year?'),
      text('Bank account and routing number for a refund', false),
    ],
    correctnessMode: 'advisory',
    dueInDays: 30,
    source: 'built-in',
  },
  {
    name: 'business-year-end',
    title: 'Business year-end close',
    description: "Year-end records to close a business's books and prepare its annual accounts and return.",
    items: [
      file('Bank and credit card statements for the full year'),
      file('Year-end loan statements'),
      file('Accounts receivable aging report'),
      file('Accounts payable aging report'),
      file('Inventory count at year end', false),
      file('Fixed asset purchases and disposals, with invoices', false),
      number('Cash on hand at year end'),
      file('Payroll year-end summary'),
      text('Owner draws or distributions during the year', false),
    ],
    correctnessMode: 'soft',
    dueInDays: 45,
    source: 'built-in',
  },
  {
    name: 'bookkeeping-onboarding',
    title: 'Welcome: bookkeeping onboarding',
    description: 'What a new bookkeeping client provides to get started: entity details, access, opening balances.',
    items: [
      text('Legal business name and trading name'),
      text('Tax identification number (EIN)'),
      file('Formation documents (articles, operating agreement)'),
      date('Financial year end'),
      file('Most recent bank statement for every business account'),
      file('Opening trial balance or last year-end financial statements', false),
      text('Accounting software in use, if any', false),
      yesNo('Do you have employees on payroll?'),
    ],
    dueInDays: 14,
    source: 'built-in',
  },
  {
    name: 'payroll-quarter-end',
    title: 'Payroll quarter-end',
    description: 'Quarter-end payroll records for quarterly payroll tax filings and reconciliation.',
    items: [
      file('Payroll register for the quarter'),
      file('Payroll tax deposit confirmations'),
      number('Number of employees paid this quarter'),
      file('New hire and termination details', false),
      file('Benefits and retirement contribution reports', false),
      yesNo('Any changes in pay rates or pay schedule this quarter?'),
    ],
    correctnessMode: 'hard',
    dueInDays: 10,
    source: 'built-in',
  },
  {
    name: 'mortgage-application',
    title: 'Mortgage application documents',
    description: 'Income, asset and identity documents a lender asks for with a mortgage application.',
    items: [
      file('Government-issued photo ID'),
      file('Pay stubs for the last 30 days'),
      file('W-2 forms for the last two years'),
      file('Tax returns for the last two years'),
      file('Bank statements for the last two months'),
      file('Investment and retirement account statements', false),
      file('Signed purchase agreement', false),
      number('Down payment amount'),
      text('Current employer and position'),
      file('Gift letter for any gifted down payment funds', false),
    ],
    correctnessMode: 'hard',
    dueInDays: 7,
    source: 'built-in',
  },
  {
    name: 'legal-intake-kyc',
    title: 'New client intake and identity verification',
    description: 'Know-your-customer identity and contact details a firm verifies before taking on a client.',
    items: [
      text('Full legal name'),
      date('Date of birth'),
      file('Government-issued photo ID (passport or driving licence)'),
      file('Proof of address dated within the last three months'),
      text('Current residential address'),
      text('Occupation and employer'),
      yesNo('Are you a politically exposed person, or related to one?'),
      file('Company registration and ownership documents, if acting for a company', false),
      text('Source of funds for this matter', false),
    ],
    correctnessMode: 'hard',
    dueInDays: 7,
    source: 'built-in',
  },
];
