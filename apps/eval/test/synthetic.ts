/**
 * A tiny LoCoMo-shaped document written for the tests: names, session counts and quirks that are not LoCoMo's,
 * so nothing in the eval can lean on the real file's particulars.
 */
export function syntheticLocomo(): unknown[] {
  return [
    {
      sample_id: 'synth-a',
      conversation: {
        speaker_a: 'Ingrid',
        speaker_b: 'Tomasz',
        session_1_date_time: '9:05 am on 3 March, 2021',
        session_1: [
          { speaker: 'Ingrid', dia_id: 'D1:1', text: 'I adopted a greyhound called Pepper last weekend.' },
          { speaker: 'Tomasz', dia_id: 'D1:2', text: 'Lovely! I started learning the cello in January.' },
          {
            speaker: 'Ingrid',
            dia_id: 'D1:3',
            text: 'Look at this.',
            img_url: ['http://example.invalid/x.jpg'],
            blip_caption: 'a photo of a lighthouse on a rocky coast',
            query: 'lighthouse',
          },
        ],
        session_2_date_time: '4:30 pm on 17 June, 2021',
        session_2: [
          {
            speaker: 'Tomasz',
            dia_id: 'D2:1',
            text: 'My cello teacher moved to Lisbon, so lessons are online now.',
          },
          { speaker: 'Ingrid', dia_id: 'D2:2', text: 'Pepper won a ribbon at the county fair on Saturday.' },
        ],
        // A session whose date cannot be read: it falls one day after the previous one.
        session_10_date_time: 'sometime later',
        session_10: [
          { speaker: 'Ingrid', dia_id: 'D10:1', text: 'We are planning a kayaking trip to the fjords.' },
          {
            speaker: 'Tomasz',
            dia_id: 'D10:2',
            text: 'I finally bought a second-hand cello from a luthier.',
          },
        ],
      },
      qa: [
        {
          question: 'What is the name of the greyhound Ingrid adopted?',
          answer: 'Pepper',
          evidence: ['D1:1'],
          category: 4,
        },
        {
          question: 'Where did Tomasz cello teacher move?',
          answer: 'Lisbon',
          evidence: ['D02:01'],
          category: 4,
        },
        {
          question: 'What did Pepper win and what breed is Pepper?',
          answer: 'a ribbon; greyhound',
          evidence: ['D1:1; D2:2'],
          category: 1,
        },
        {
          question: 'When did Ingrid adopt the greyhound?',
          answer: 'late February 2021',
          evidence: ['D:1:1'],
          category: 2,
        },
        {
          question: 'What lighthouse picture did Ingrid share?',
          answer: 'a lighthouse on a rocky coast',
          evidence: ['D1:3 D1:2'],
          category: 3,
        },
        {
          question: 'What trip is Tomasz planning?',
          adversarial_answer: 'kayaking to the fjords',
          evidence: ['D10:1'],
          category: 5,
        },
        { question: 'What does Ingrid think about jazz?', answer: 'unknown', evidence: [], category: 3 },
        { question: 'Garbage evidence only', answer: 'x', evidence: ['D'], category: 4 },
      ],
      observation: { never: 'used' },
      session_summary: { never: 'used' },
    },
    {
      sample_id: 'synth-b',
      conversation: {
        speaker_a: 'Oluwaseun',
        speaker_b: 'Mei',
        session_1_date_time: '2022-11-05T10:00:00Z',
        session_1: [
          { speaker: 'Mei', dia_id: 'D1:1', text: 'I got a job as a pastry chef at a bakery in Osaka.' },
          {
            speaker: 'Oluwaseun',
            dia_id: 'D1:2',
            text: 'Congratulations! I am training for the Lagos marathon.',
          },
        ],
      },
      qa: [
        {
          question: 'Where does Mei work as a pastry chef?',
          answer: 'a bakery in Osaka',
          evidence: ['D1:1'],
          category: 4,
        },
        {
          question: 'Which marathon is Oluwaseun training for?',
          answer: 'Lagos',
          evidence: ['D1:2'],
          category: 7,
        },
      ],
    },
  ];
}

/**
 * A tiny LongMemEval-shaped document (the dev60 file's shape): speakers `user` and `assistant`, LongMemEval dates,
 * one question per haystack with `question_type` and `question_date`. Written for the tests; none of its text is
 * LongMemEval's.
 */
export function syntheticLongMemEval(): unknown[] {
  return [
    {
      sample_id: 'lme-a',
      conversation: {
        speaker_a: 'user',
        speaker_b: 'assistant',
        session_1_date_time: '2023/05/20 (Sat) 02:21',
        session_1: [
          {
            speaker: 'user',
            dia_id: 'D1:1',
            text: 'I repotted my fiddle-leaf fig into a terracotta pot today.',
          },
          {
            speaker: 'assistant',
            dia_id: 'D1:2',
            text: 'For a fiddle-leaf fig I recommend a chunky aroid mix with orchid bark and perlite.',
          },
        ],
        session_2_date_time: '2023/06/02 (Fri) 18:05',
        session_2: [
          { speaker: 'user', dia_id: 'D2:1', text: 'My sourdough starter finally doubled overnight.' },
          { speaker: 'assistant', dia_id: 'D2:2', text: 'Great, feed it at a one to one ratio.' },
        ],
      },
      qa: [
        {
          question: 'What soil mix did you recommend for my fiddle-leaf fig?',
          answer: 'a chunky aroid mix with orchid bark and perlite',
          evidence: ['D1:2'],
          category: 4,
          question_type: 'single-session-assistant',
          question_date: '2023/06/10 (Sat) 09:00',
        },
      ],
    },
    {
      sample_id: 'lme-b',
      conversation: {
        speaker_a: 'user',
        speaker_b: 'assistant',
        session_1_date_time: '2023/01/13 (Fri) 20:00',
        session_1: [
          { speaker: 'user', dia_id: 'D1:1', text: 'I signed up for a pottery class on Thursday evenings.' },
          { speaker: 'assistant', dia_id: 'D1:2', text: 'Pottery is a lovely hobby.' },
        ],
      },
      qa: [
        {
          question: 'Which evening is my pottery class?',
          answer: 'Thursday',
          evidence: ['D1:1'],
          category: 1,
          question_type: 'multi-session',
          question_date: '2023/02/01 (Wed) 10:00',
        },
      ],
    },
  ];
}
