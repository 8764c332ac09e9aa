/** The sandbox seed's words: people's and businesses' names, and the checklists a firm sends (titles with typed items). */
import type { ItemType } from '../domain/checklist.js';

export const FIRST = [
  'Olivia',
  'Liam',
  'Amelia',
  'Noah',
  'José',
  'Zoë',
  'Siobhán',
  'François',
  'Priya',
  'Mateo',
  'Chloé',
  'Björn',
  'Aisha',
  'Hiroshi',
  'Renée',
  'Ewan',
  'Lucía',
  'Tomasz',
  'Nadia',
  'Grace',
];
export const LAST = [
  'Álvarez',
  'Müller',
  "O'Brien",
  'Dupont',
  'Patel',
  'Nguyen',
  'Kowalski',
  'Okafor',
  'Lindqvist',
  'Fernández',
  'Smith',
  'Tanaka',
  'Rossi',
  'MacLeod',
  'Haddad',
  'Brennan',
];
export const BUSINESSES = [
  'Bluebird Bakery Ltd',
  'Acme Widgets LLC',
  'Northgate Dental Practice',
  'Riverside Plumbing & Heating',
  'Kestrel Logistics Inc',
  'Café Lumière SARL',
  'Summit Yoga Studio',
  'Ironbridge Builders',
  'Pixel Forge Studios',
  'Greenleaf Landscaping',
  'Harbourview Physio',
  'Atlas Freight Co',
];
export const TRUSTS = [
  'The Hartley Family Trust',
  'Okafor Education Trust',
  'The Lindqvist Charitable Trust',
  'Brennan Irrevocable Trust',
  'The Rossi Living Trust',
];

export interface Template {
  title: string;
  items: [string, ItemType, boolean][];
}

export const TEMPLATES: Template[] = [
  {
    title: '2025 individual tax return',
    items: [
      ['W-2 forms', 'file', true],
      ['1099 forms', 'file', false],
      ['Prior year return', 'file', true],
      ['Did you move in 2025?', 'boolean', true],
      ['Charitable donations total', 'number', false],
      ['Dependents (names and dates of birth)', 'text', false],
    ],
  },
  {
    title: 'Bookkeeping onboarding',
    items: [
      ['Last 3 months of bank statements', 'file', true],
      ['Chart of accounts', 'file', false],
      ['Fiscal year end', 'date', true],
      ['Accounting software used', 'text', true],
      ['Do you run payroll?', 'boolean', true],
    ],
  },
  {
    title: 'Mortgage pre-approval documents',
    items: [
      ['Two most recent pay stubs', 'file', true],
      ['W-2s for the last two years', 'file', true],
      ['Bank statements (60 days)', 'file', true],
      ['Photo ID', 'file', true],
      ['Gift letter', 'file', false],
      ['Intended purchase price', 'number', true],
    ],
  },
  {
    title: 'Estate planning intake',
    items: [
      ['Existing will', 'file', false],
      ['Beneficiaries', 'text', true],
      ['Date of birth', 'date', true],
      ['Property deeds', 'file', false],
      ['Minor children?', 'boolean', true],
    ],
  },
  {
    title: 'Q3 payroll reconciliation',
    items: [
      ['Payroll register', 'file', true],
      ['941 filing', 'file', true],
      ['Headcount at quarter end', 'number', true],
    ],
  },
  {
    title: 'Trust annual accounting',
    items: [
      ['Brokerage statements', 'file', true],
      ['Distributions made', 'text', true],
      ['Trustee fees paid', 'number', false],
      ['Valuation date', 'date', true],
    ],
  },
  {
    title: 'Business tax return (Form 1120-S)',
    items: [
      ['Profit and loss statement', 'file', true],
      ['Balance sheet', 'file', true],
      ['Fixed asset additions', 'file', false],
      ['Shareholder distributions', 'number', true],
      ['Vehicle used for business?', 'boolean', false],
    ],
  },
  {
    title: 'KYC identity verification',
    items: [
      ['Passport or driving licence', 'file', true],
      ['Proof of address', 'file', true],
      ['Nationality', 'text', true],
    ],
  },
  {
    title: 'Litigation hold documents',
    items: [
      ['Relevant e-mails (export)', 'file', true],
      ['Contracts with the counterparty', 'file', true],
      ['Date the dispute began', 'date', true],
      ['Summary of events', 'text', true],
    ],
  },
];
