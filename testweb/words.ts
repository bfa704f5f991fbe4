// Word lists for pseudo-random article text. A few hosts publish in German or French so
// language detection in the extract stage has something real-ish to work on; the words
// are common ones of each language so a stop-word based detector gets them right.

import { pick, randInt, type Rng } from './prng.js';

export type PageLanguage = 'en' | 'de' | 'fr';

const EN = `the of and to in is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so what no
more other time about out up into them some could these two may then do first any my now
such like our over man me even most made after also did many before must through back years
where much your way well down should because each just those people how too little state
good very make world still own see men work long get here between both life being under
never day same another know while last might us great old year off come since against go
came right used take three himself few house use during without again place around however
home small found thought went say part once general high upon school every does got united
left number course war until always away something fact though water less public put think
almost hand enough far took head yet government system better set told nothing night end
why called didn't eyes find going look asked later knew point next program city business
give group toward young days let room president side social given present several order
national possible rather second face per among form important often things looking early
white case large become large need big four within felt along children saw best church ever
least power development light thing seemed family interest want members mind country area
crawler archive network server index search garden river mountain harbor library market
station museum bridge forest village valley island coast weather season history science`;

const DE = `der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es
an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen so
zum war haben nur oder aber vor zur bis mehr durch man sein wurde sei ins hatte kann gegen
vom können schon wenn habe seine ihre dann unter wir soll ich eines jahr zwei jahren diese
dieser wieder keine seiner worden will zwischen immer millionen was sagte gibt alle diesen
seit muss wurden beim doch jedoch prozent geht sollen ersten sowie ihren einen heute neue
stadt land leben zeit welt arbeit haus schule kinder wasser garten fluss berg hafen markt
bahnhof museum brücke wald dorf tal insel küste wetter jahreszeit geschichte wissenschaft
bibliothek archiv netzwerk suche ordnung frage antwort beispiel regierung gesellschaft
unternehmen entwicklung bedeutung verbindung erfahrung mitglieder familie straße abend
morgen woche monat sommer winter frühling herbst tag nacht licht schnell langsam groß klein`;

const FR = `le de la et les des en un du une que est pour qui dans par plus pas au sur ne se sont
il ce avec son elle mais nous comme ont ou aux leur cette été tout sa ses on deux fait aussi
entre lui bien peut dont sans même ans depuis avant tous encore après où sous faire autres
être très contre chez avait années premier ils nouveau selon toujours pendant votre notre
jour temps vie monde travail maison école enfants eau jardin rivière montagne port marché
gare musée pont forêt village vallée île côte météo saison histoire science bibliothèque
archive réseau recherche ordre question réponse exemple gouvernement société entreprise
développement importance rapport expérience membres famille rue soir matin semaine mois été
hiver printemps automne nuit lumière rapide lent grand petit ville pays région politique
public général national social économie culture musique livre lettre parole pensée`;

function split(text: string): readonly string[] {
  return Object.freeze([...new Set(text.split(/\s+/).filter((w) => w.length > 0))]);
}

export const WORDS: Readonly<Record<PageLanguage, readonly string[]>> = Object.freeze({
  en: split(EN),
  de: split(DE),
  fr: split(FR),
});

/** Localised labels for the page chrome (nav, footer), so a German page is German throughout. */
export const LABELS: Readonly<Record<PageLanguage, Record<'home' | 'articles' | 'docs' | 'blog' | 'related' | 'more' | 'contact' | 'rights', string>>> = Object.freeze({
  en: { home: 'Home', articles: 'Articles', docs: 'Documentation', blog: 'Blog', related: 'Related reading', more: 'Read more', contact: 'Contact', rights: 'All rights reserved' },
  de: { home: 'Startseite', articles: 'Artikel', docs: 'Dokumentation', blog: 'Blog', related: 'Weitere Artikel', more: 'Weiterlesen', contact: 'Kontakt', rights: 'Alle Rechte vorbehalten' },
  fr: { home: 'Accueil', articles: 'Articles', docs: 'Documentation', blog: 'Blog', related: 'À lire aussi', more: 'Lire la suite', contact: 'Contact', rights: 'Tous droits réservés' },
});

/** A capitalised run of min..max random words: titles, headings, anchor texts. */
export function phrase(rng: Rng, lang: PageLanguage, min: number, max: number): string {
  const n = randInt(rng, min, max);
  const words: string[] = [];
  for (let k = 0; k < n; k++) words.push(pick(rng, WORDS[lang]));
  const s = words.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
