import { describe, expect, it } from 'vitest';
import { echoesQuery, isQuestionOnly, topicStems } from '../src/text.js';

describe('isQuestionOnly', () => {
  it('is true for turns that only ask or request', () => {
    for (const t of [
      'Where do I live?',
      'where do i live',
      'Where do I live now? Remind me.',
      'What is my rent?" ',
      'Can you list my trips 🙂',
      'Tell me what my sister is called.',
      'How much do I pay for rent?!?',
    ]) {
      expect(isQuestionOnly(t), t).toBe(true);
    }
  });

  it('is false for a turn that says something besides asking', () => {
    for (const t of [
      'I moved to Denver. Any tips?',
      'I live in Denver.',
      'My rent is $2,400, is that a lot?',
      '',
      '   ',
    ]) {
      expect(isQuestionOnly(t), t).toBe(false);
    }
  });
});

describe('echoesQuery', () => {
  const q = (text: string) => topicStems(text);

  it('is the question asked again, in other function words', () => {
    expect(echoesQuery('Where do I live?', q('Where do I live these days?'))).toBe(true);
    expect(echoesQuery('What is my rent?', q('How much is my rent and where do I live?'))).toBe(true);
  });

  it('is a turn that says the query again nearly word for word, statement or not', () => {
    const query = "I'm planning a trip to Denver soon. Any suggestions on what to do there?";
    expect(echoesQuery(query, q(query))).toBe(true);
    expect(echoesQuery("I'm planning a trip to Denver. Any suggestions?", q(query))).toBe(true);
    // One sentence that tells and asks, said again.
    const weekend = 'I am planning another theme park weekend; do you have any suggestions?';
    expect(echoesQuery(weekend, q(weekend))).toBe(true);
    // A turn that holds the query's words and more is not a repeat.
    expect(
      echoesQuery('I planned a trip to Denver with my sister in May, we loved the Botanic Gardens', q(query)),
    ).toBe(false);
    // Nor is a statement that holds only part of what the query is about.
    expect(echoesQuery('I live in Denver.', q(query))).toBe(false);
  });

  it('is not a question that asks more than the query, nor a statement, nor a query without content words', () => {
    expect(echoesQuery('Which dentist should I book near where I live?', q('Where do I live?'))).toBe(false);
    expect(echoesQuery('I live in Denver.', q('Where do I live in Denver?'))).toBe(false);
    // A statement holding every word of a yes/no question is its answer.
    expect(echoesQuery('I live in Denver.', q('Do I live in Denver?'))).toBe(false);
    expect(echoesQuery('Where do I live?', q('what is it?'))).toBe(false);
    expect(echoesQuery('What?', q('What?'))).toBe(false);
  });
});
